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

export function fillTemplate(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}
