/**
 * @module core/dropped-fields
 * Request fields a model endpoint accepts but does not forward (they are not in its schema):
 * finding them, and naming them in the response's `x-switchyard-warnings` as
 * `unsupported:<field> (unknown field, not forwarded)`. Names are made header-safe and the list
 * is bounded, whatever a client sends.
 */
import type { TObject } from "@sinclair/typebox";
import type { CallWarning } from "../spec/index.ts";

/** Fields named one by one; the rest are counted. */
const MAX_NAMED = 20;
const MAX_NAME_CHARS = 64;

/** The top-level fields of `body` that `schema` does not declare. */
export function undeclaredFields(body: unknown, schema: TObject): string[] {
  if (typeof body !== "object" || body === null) return [];
  return Object.keys(body).filter((key) => !Object.hasOwn(schema.properties, key));
}

/** A field name as it can appear in a header: printable ASCII without `;`, and short. */
function headerSafe(name: string): string {
  const safe = name.replace(/[^\x20-\x3a\x3c-\x7e]/g, "?");
  return safe.length > MAX_NAME_CHARS ? `${safe.slice(0, MAX_NAME_CHARS)}...` : safe;
}

/** One warning per dropped field (at most {@link MAX_NAMED}, then a count of the rest). */
export function droppedFieldWarnings(fields: readonly string[]): CallWarning[] {
  const warnings: CallWarning[] = fields.slice(0, MAX_NAMED).map((field) => ({
    type: "unsupported",
    setting: headerSafe(field),
    details: "unknown field, not forwarded",
  }));
  if (fields.length > MAX_NAMED)
    warnings.push({
      type: "other",
      message: `${fields.length - MAX_NAMED} more unknown fields not forwarded`,
    });
  return warnings;
}
