/**
 * @module store/cursor
 * The one pagination convention of every list endpoint: `?limit=&cursor=` in, and
 * `{ object: "list", data, has_more, next_cursor }` out. A cursor is the sort key of the last
 * row a page returned (for example `[createdAt, id]`), base64url-encoded JSON: opaque to
 * clients, stable under inserts (a row added while a client pages is never seen twice), and
 * checked on the way in — a cursor that does not decode to the expected shape is a
 * `400 invalid_request`, never a silent first page.
 */
import { GatewayError } from "../errors/index.ts";

/** One component of a sort key: a number (a time, a sequence) or a string (an id). */
export type CursorPart = string | number;

export function encodeCursor(parts: readonly CursorPart[]): string {
  return Buffer.from(JSON.stringify(parts), "utf8").toString("base64url");
}

/**
 * Decodes a cursor made by `encodeCursor` whose parts have the given types, in order; throws
 * `400 invalid_request` naming the parameter otherwise.
 */
export function decodeCursor(
  cursor: string,
  shape: readonly ("string" | "number")[],
  parameter = "cursor",
): CursorPart[] {
  const invalid = () =>
    new GatewayError(
      "invalid_request",
      {
        detail: `\`${parameter}\` is not a cursor this list gave out; pass the \`next_cursor\` of the previous page.`,
      },
      { param: parameter },
    );
  if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parts) || parts.length !== shape.length) throw invalid();
  parts.forEach((part, index) => {
    const expected = shape[index];
    if (typeof part !== expected) throw invalid();
    if (expected === "number" && !Number.isSafeInteger(part)) throw invalid();
  });
  return parts as CursorPart[];
}

/** A page of a list: what every list endpoint answers. */
export interface Page<T> {
  object: "list";
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * Builds a page from rows fetched with `limit + 1` (the extra row only tells whether there is
 * more): the cursor is the sort key of the last row kept.
 */
export function pageOf<Row, T>(
  rows: readonly Row[],
  limit: number,
  sortKey: (row: Row) => readonly CursorPart[],
  describe: (row: Row) => T,
): Page<T> {
  const kept = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = kept.at(-1);
  return {
    object: "list",
    data: kept.map(describe),
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(sortKey(last)) : null,
  };
}
