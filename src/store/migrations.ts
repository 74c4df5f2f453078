/**
 * @module store/migrations
 * Schema migrations, run at start-up. Written with Kysely's schema builder so one list serves
 * SQLite and PostgreSQL; append new migrations, never edit a shipped one.
 */
import type { Kysely, Migration, MigrationProvider } from "kysely";
import { Migrator } from "kysely";

export type SqlDialect = "sqlite" | "postgres";

function migrations(dialect: SqlDialect): Record<string, Migration> {
  const serial = dialect === "postgres" ? "bigserial" : "integer";
  return {
    "0001_accounts_keys_ledger": {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("accounts")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("email", "text", (c) => c.notNull().unique())
          .addColumn("password_hash", "text")
          .addColumn("role", "text", (c) => c.notNull())
          .addColumn("balance_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("api_keys")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("key_hash", "text", (c) => c.notNull().unique())
          .addColumn("prefix", "text", (c) => c.notNull())
          .addColumn("models", "text", (c) => c.notNull())
          .addColumn("rpm", "integer")
          .addColumn("tpm", "integer")
          .addColumn("concurrency", "integer")
          .addColumn("expires_at", "bigint")
          .addColumn("revoked_at", "bigint")
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("api_keys_account")
          .on("api_keys")
          .column("account_id")
          .execute();
        await db.schema
          .createTable("sessions")
          .addColumn("token_hash", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("expires_at", "bigint", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("ledger_entries")
          .addColumn("seq", serial, (c) =>
            dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn("id", "text", (c) => c.notNull().unique())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("kind", "text", (c) => c.notNull())
          .addColumn("amount_micros", "bigint", (c) => c.notNull())
          .addColumn("hold_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("request_id", "text")
          .addColumn("key_id", "text")
          .addColumn("model", "text")
          .addColumn("breakdown", "text")
          .addColumn("reason", "text")
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("ledger_account")
          .on("ledger_entries")
          .column("account_id")
          .execute();
        await db.schema
          .createIndex("ledger_request_kind")
          .on("ledger_entries")
          .columns(["request_id", "kind"])
          .unique()
          .execute();
      },
    },
    "0002_holds_and_usage": {
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable("accounts")
          .addColumn("held_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createTable("usage_records")
          .addColumn("request_id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("key_id", "text")
          .addColumn("model", "text", (c) => c.notNull())
          .addColumn("endpoint", "text", (c) => c.notNull())
          .addColumn("status", "text", (c) => c.notNull())
          .addColumn("input_tokens", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("cached_input_tokens", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("cache_write_tokens", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("output_tokens", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("reasoning_tokens", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("images", "integer", (c) => c.notNull().defaultTo(0))
          .addColumn("video_seconds", "integer", (c) => c.notNull().defaultTo(0))
          .addColumn("characters", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("cost_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("held_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("usage_source", "text")
          .addColumn("upstream_request_id", "text")
          .addColumn("latency_ms", "integer")
          .addColumn("ttfb_ms", "integer")
          .addColumn("breakdown", "text")
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("usage_account_time")
          .on("usage_records")
          .columns(["account_id", "created_at"])
          .execute();
      },
    },
    "0003_key_model_aliases": {
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable("api_keys")
          .addColumn("model_aliases", "text", (c) => c.notNull().defaultTo("{}"))
          .execute();
      },
    },
  };
}

export async function migrateToLatest(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error || failed) {
    throw new Error(`Database migration ${failed?.migrationName ?? ""} failed: ${String(error)}`, {
      cause: error,
    });
  }
}
