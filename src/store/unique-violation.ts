/**
 * @module store/unique-violation
 * Whether a database error is a unique or primary-key violation, on either database: the
 * losing side of a race to insert the same row.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  const text = String((error as { message?: unknown })?.message ?? error);
  return (
    code === "23505" ||
    code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    code === "SQLITE_CONSTRAINT_UNIQUE" ||
    /UNIQUE constraint/.test(text)
  );
}
