/**
 * @module errors/gateway-error
 * `GatewayError`: a catalogue error with its parameters. Thrown anywhere; rendered once by the
 * HTTP layer in the dialect of the endpoint that failed.
 */
import { ERROR_CATALOGUE, type ErrorCode } from "./catalogue.ts";

const MARKER = Symbol.for("switchyard.gateway-error");

export type ErrorParams = Record<string, string | number | undefined>;

export interface GatewayErrorOptions {
  /** The request field the error is about, rendered as `param`. */
  param?: string;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /** A message that replaces the template (provider text passed through). */
  message?: string;
  /** A code to render instead of the catalogue code (provider-style passthrough). */
  providerCode?: string;
  /** A status to render instead of the catalogue status (provider passthrough). */
  status?: number;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly [MARKER] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;
  readonly providerCode: string | undefined;

  constructor(code: ErrorCode, params: ErrorParams = {}, options: GatewayErrorOptions = {}) {
    const definition = ERROR_CATALOGUE[code];
    super(options.message ?? fillTemplate(definition.message, params), { cause: options.cause });
    this.name = "GatewayError";
    this.code = code;
    this.status = options.status ?? definition.status;
    this.type = definition.type;
    this.param = options.param;
    this.headers = options.headers ?? {};
    this.providerCode = options.providerCode;
  }

  static isInstance(value: unknown): value is GatewayError {
    return typeof value === "object" && value !== null && MARKER in value;
  }
}

/** Longest value echoed into a message: a client's 10 MB model name is not sent back whole. */
export const MAX_ECHOED_CHARS = 1000;

/** A parameter as shown in a message, cut to {@link MAX_ECHOED_CHARS} characters. */
function echoed(value: unknown): string {
  const text = String(value);
  return text.length > MAX_ECHOED_CHARS
    ? `${text.slice(0, MAX_ECHOED_CHARS)}… (${text.length} characters)`
    : text;
}

export function fillTemplate(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    return value === undefined || value === null ? `{${name}}` : echoed(value);
  });
}
