/**
 * @module endpoints/responses/known-fields
 * An input item cut down to the fields its schema knows (and its content parts to theirs): what
 * a client adds besides is neither sent upstream, billed nor kept.
 */
import { CONTENT_PART_FIELDS, ITEM_FIELDS, type ResponsesInputItem } from "./schema.ts";

/** `value`'s own fields among `fields`. */
function only(value: object, fields: readonly string[] | undefined): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const field of fields ?? []) {
    const found = (value as Record<string, unknown>)[field];
    if (found !== undefined) kept[field] = found;
  }
  return kept;
}

/** Content parts with their known fields only; a string stays a string. */
export function knownParts(parts: unknown): unknown {
  if (!Array.isArray(parts)) return parts;
  return parts.map((part: { type?: unknown }) =>
    only(part, CONTENT_PART_FIELDS[String(part.type)]),
  );
}

/** The item's known fields, its content, summary and output parts likewise. */
export function knownItemFields(item: ResponsesInputItem): Record<string, unknown> {
  const kept = only(item, ITEM_FIELDS[item.type ?? "message"]);
  for (const field of ["summary", "content", "output"])
    if (field in kept) kept[field] = knownParts(kept[field]);
  return kept;
}
