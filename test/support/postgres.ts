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

/** Runs one statement on the test database with a connection of its own. */
async function runStatement(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * A throw-away schema in the test database (`<prefix>_<pid>_<time>`): the URL that makes it the
 * search path, and `drop` for the end of the suite.
 */
export async function throwawaySchema(
  prefix: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${process.pid}_${Date.now()}`;
  await runStatement(`create schema ${schema}`);
  return {
    url: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: () => runStatement(`drop schema ${schema} cascade`),
  };
}
