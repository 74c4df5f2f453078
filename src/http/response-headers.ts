/**
 * @module http/response-headers
 * The headers every model answer shares, written in one place: the quota lease's limits, the
 * endpoint's own headers, `x-switchyard-warnings` (settings that were changed, ignored or
 * dropped, `; `-separated and bounded in length whatever the request held),
 * `x-switchyard-cost-micros` and `x-switchyard-output-cap-lowered`; every value made safe for a
 * header. `x-switchyard-sandbox` is set as soon as a sandbox route is called, so error answers
 * carry it too.
 */
import type { ModelCallHead } from "../core/model-call.ts";
import { type CallWarning, formatWarning } from "../spec/index.ts";

/** Set to `true` on every response the sandbox (not a real vendor) answered. */
export const SANDBOX_HEADER = "x-switchyard-sandbox";

const MAX_HEADER_CHARS = 4000;

export function warningHeaders(warnings: readonly CallWarning[]): Record<string, string> {
  if (warnings.length === 0) return {};
  const notes = [...new Set(warnings.map(formatWarning))];
  return { "x-switchyard-warnings": headerValue(notes.join("; ")) };
}

/**
 * A value as a header can carry it: printable ASCII as it is, anything else (a vendor's model
 * name in another script, a line break) percent-encoded, and bounded in length. Node refuses
 * other characters when the head is written — by then the answer is charged, and the client
 * would get a 500 instead of what it paid for.
 */
export function headerValue(value: string): string {
  const safe = /^[\x20-\x7e]*$/.test(value)
    ? value
    : // Through UTF-8 first: a lone surrogate (which encodeURIComponent refuses) becomes U+FFFD.
      encodeURIComponent(Buffer.from(value, "utf8").toString("utf8"));
  return safe.length > MAX_HEADER_CHARS ? safe.slice(0, MAX_HEADER_CHARS) : safe;
}

/** The headers of a model answer; `costMicros` when it was charged before the body was sent. */
export function answerHeaders(head: ModelCallHead, costMicros?: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(head.headers)) headers[name] = headerValue(value);
  if (head.warnings.length > 0) Object.assign(headers, warningHeaders(head.warnings));
  if (costMicros !== undefined) headers["x-switchyard-cost-micros"] = String(costMicros);
  if (head.outputCapLoweredTo !== undefined)
    headers["x-switchyard-output-cap-lowered"] = String(head.outputCapLoweredTo);
  return headers;
}
