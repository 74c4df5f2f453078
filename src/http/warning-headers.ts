/**
 * @module http/warning-headers
 * The `x-switchyard-warnings` header: the settings a request carried that were changed, ignored
 * or dropped, `; `-separated and bounded in length whatever the request held.
 */
import { type CallWarning, formatWarning } from "../spec/index.ts";

const MAX_HEADER_CHARS = 4000;

export function warningHeaders(warnings: readonly CallWarning[]): Record<string, string> {
  return warnings.length > 0
    ? {
        "x-switchyard-warnings": warnings.map(formatWarning).join("; ").slice(0, MAX_HEADER_CHARS),
      }
    : {};
}
