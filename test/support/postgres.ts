/**
 * @module test/support/postgres
 * The local PostgreSQL the store tests use when it answers (127.0.0.1:5432, database `test`, or
 * `TEST_POSTGRES_URL`); tests that need it are skipped otherwise.
 */
import pg from "pg";

export const PG_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}
