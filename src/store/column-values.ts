/**
 * @module store/column-values
 * Values from vendors made fit for the columns they land in, the same on both databases:
 * PostgreSQL refuses a NUL character in `text` and a fraction in `integer` (SQLite takes both),
 * and a refused write of a vendor's answer would leave the request or task it closes unwritten.
 */

/** `text` without NUL characters (which no reader needs); null stays null. */
export function storedText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.includes("\u0000") ? value.replaceAll("\u0000", "") : value;
}

/**
 * A whole number within `[min, max]` for an `integer` column: a fraction rounded the way `round`
 * says (up for seconds that are billed, to nearest for a percentage); null when not a number.
 */
export function storedInteger(
  value: number | null | undefined,
  min: number,
  max: number,
  round: (value: number) => number = Math.round,
): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  return Math.min(max, Math.max(min, round(value)));
}
