/**
 * @module store/migrations
 * Schema migrations, run at start-up. Written with Kysely's schema builder so one list serves
 * SQLite and PostgreSQL; append new migrations, never edit a shipped one.
 */
import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  type MigrationResultSet,
  Migrator,
} from "kysely";
import { budgetWebhooksMigration } from "./budget-webhooks.ts";
import { leanBillingTablesMigration } from "./lean-billing-tables.ts";
import { leanInflightMigration } from "./lean-inflight.ts";
import { oneClosingMigration } from "./pg-billing.ts";
import { spendByDayMigration } from "./spend-by-day.ts";
import { videoTaskTablesMigration } from "./video-task-tables.ts";

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
    // SQLite: fewer B-trees per settlement (src/store/lean-billing-tables.ts).
    "0004_lean_sqlite_billing_tables": leanBillingTablesMigration(dialect),
    "0005_key_tree": {
      // A key minted by a key records its parent: it is revoked with it, shares its rate and
      // concurrency budget, and sees only its own subtree. The index serves the subtree walk.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable("api_keys").addColumn("parent_key_id", "text").execute();
        await db.schema
          .createIndex("api_keys_parent")
          .on("api_keys")
          .column("parent_key_id")
          .execute();
      },
    },
    "0006_inflight_requests": {
      // Every request between its hold and its settlement has a row here, on both databases, so a
      // restarted gateway can settle what a dead process left (at its last checkpoint, at least
      // its input) at once. `instances` holds each live process's heartbeat (PostgreSQL serves
      // several). Usage records say when a charge was capped at its hold, and when the output
      // cap was lowered to fit the balance.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("inflight_requests")
          .addColumn("request_id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("key_id", "text")
          .addColumn("model", "text", (c) => c.notNull())
          .addColumn("endpoint", "text", (c) => c.notNull())
          .addColumn("instance_id", "text", (c) => c.notNull())
          .addColumn("hold_micros", "bigint", (c) => c.notNull())
          .addColumn("floor_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("checkpoint_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .addColumn("checkpoint_usage", "text")
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("inflight_instance")
          .on("inflight_requests")
          .column("instance_id")
          .execute();
        await db.schema
          .createTable("instances")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("started_at", "bigint", (c) => c.notNull())
          .addColumn("heartbeat_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .alterTable("usage_records")
          .addColumn("overrun_micros", "bigint", (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .alterTable("usage_records")
          .addColumn("output_cap_lowered_to", "integer")
          .execute();
      },
    },
    // Asynchronous video tasks and webhook secrets (src/store/video-task-tables.ts).
    "0007_video_tasks": videoTaskTablesMigration,
    "0008_responses": {
      // Responses API answers kept with `store` (src/endpoints/responses): read back, listed and
      // continued by `previous_response_id`, always within the account that made them.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("responses")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("model", "text", (c) => c.notNull())
          .addColumn("response", "text", (c) => c.notNull())
          .addColumn("input_items", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
      },
    },
    "0009_audit_events": {
      // The audit trail (src/store/sql-audit.ts, docs/audit.md). No foreign keys: an event
      // outlives what it names.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("audit_events")
          .addColumn("seq", serial, (c) =>
            dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn("id", "text", (c) => c.notNull().unique())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("action", "text", (c) => c.notNull())
          .addColumn("actor_type", "text", (c) => c.notNull())
          .addColumn("actor_account_id", "text")
          .addColumn("actor_key_id", "text")
          .addColumn("actor_role", "text")
          .addColumn("actor_ip", "text")
          .addColumn("target_type", "text", (c) => c.notNull())
          .addColumn("target_id", "text")
          .addColumn("before", "text")
          .addColumn("after", "text")
          .addColumn("reason", "text")
          .addColumn("request_id", "text")
          .execute();
        await db.schema.createIndex("audit_time").on("audit_events").column("created_at").execute();
        await db.schema
          .createIndex("audit_actor")
          .on("audit_events")
          .columns(["actor_account_id", "seq"])
          .execute();
        await db.schema
          .createIndex("audit_target")
          .on("audit_events")
          .columns(["target_id", "seq"])
          .execute();
        await db.schema
          .createIndex("audit_action")
          .on("audit_events")
          .columns(["action", "seq"])
          .execute();
      },
    },
    "0011_spend_limits": {
      // Budgets (docs/budgets.md): a key's spend cap and its period (null: lifetime); an
      // account's monthly budget with the webhook its soft-limit alerts go to; and one row per
      // alert sent, whose primary key makes each threshold alert once per period, across
      // instances.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable("api_keys").addColumn("spend_limit_micros", "bigint").execute();
        await db.schema.alterTable("api_keys").addColumn("spend_limit_period", "text").execute();
        await db.schema
          .createTable("account_budgets")
          .addColumn("account_id", "text", (c) => c.primaryKey().references("accounts.id"))
          .addColumn("monthly_budget_micros", "bigint", (c) => c.notNull())
          .addColumn("webhook_url", "text")
          .addColumn("updated_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("budget_alerts")
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("period_start", "bigint", (c) => c.notNull())
          .addColumn("threshold_bp", "integer", (c) => c.notNull())
          .addColumn("spent_micros", "bigint", (c) => c.notNull())
          .addColumn("budget_micros", "bigint", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("budget_alerts_pk", [
            "account_id",
            "period_start",
            "threshold_bp",
          ])
          .execute();
      },
    },
    "0010_usage_attribution": {
      // Who a request was for, as its client said (`user`, Anthropic's `metadata.user_id`) and
      // its `metadata` string pairs (JSON), on the usage record; and the time index that lets
      // the admin usage report page across accounts (src/endpoints/billing/usage-report.ts).
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable("usage_records").addColumn("end_user", "text").execute();
        await db.schema.alterTable("usage_records").addColumn("metadata", "text").execute();
        await db.schema
          .createIndex("usage_time")
          .on("usage_records")
          .columns(["created_at", "request_id"])
          .execute();
      },
    },
    "0012_credit_codes": {
      // Prepaid credit codes (src/endpoints/credit-codes): an operator makes them, an account
      // redeems one once. Only the code's SHA-256 hash is kept, with a short prefix to show.
      // PostgreSQL also gets the ledger's (account, seq) index the account ledger pages by;
      // SQLite has it already (the lean ledger's rowid is its seq).
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("credit_codes")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("code_hash", "text", (c) => c.notNull().unique())
          .addColumn("prefix", "text", (c) => c.notNull())
          .addColumn("amount_micros", "bigint", (c) => c.notNull())
          .addColumn("note", "text")
          .addColumn("created_by", "text")
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("expires_at", "bigint")
          .addColumn("redeemed_at", "bigint")
          .addColumn("redeemed_by", "text")
          .addColumn("revoked_at", "bigint")
          .execute();
        await db.schema
          .createIndex("credit_codes_created")
          .on("credit_codes")
          .columns(["created_at", "id"])
          .execute();
        if (dialect === "postgres") {
          await db.schema
            .createIndex("ledger_account_seq")
            .on("ledger_entries")
            .columns(["account_id", "seq"])
            .execute();
        }
      },
    },
    // What was charged per UTC day, per account and per key subtree (src/store/spend-by-day.ts):
    // spend caps and budgets read day rows, not every usage record of their period.
    "0013_spend_by_day": spendByDayMigration(dialect),
    // SQLite: the in-flight rows in one B-tree instead of three (src/store/lean-inflight.ts).
    "0014_lean_sqlite_inflight": leanInflightMigration(dialect),
    // PostgreSQL: one closing ledger row per request (src/store/pg-billing.ts).
    "0015_one_closing_per_request": oneClosingMigration(dialect),
    // Budget alerts' webhook deliveries retried from the database (src/store/budget-webhooks.ts).
    "0016_budget_webhook_deliveries": budgetWebhooksMigration,
    // An operator's suspension of an account (src/store/sql-suspension.ts): its keys and
    // sessions refused until it is lifted.
    "0017_account_suspension": {
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable("accounts").addColumn("suspended_at", "bigint").execute();
        await db.schema.alterTable("accounts").addColumn("suspended_reason", "text").execute();
      },
    },
  };
}

export async function migrateToLatest(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await migrate(db, dialect, (migrator) => migrator.migrateToLatest());
}

/** Migrates up (or down) to the migration named `name`: for tests of a later migration. */
export async function migrateTo(
  db: Kysely<unknown>,
  dialect: SqlDialect,
  name: string,
): Promise<void> {
  await migrate(db, dialect, (migrator) => migrator.migrateTo(name));
}

async function migrate(
  db: Kysely<unknown>,
  dialect: SqlDialect,
  run: (migrator: Migrator) => Promise<MigrationResultSet>,
): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const { error, results } = await run(new Migrator({ db, provider }));
  const failed = results?.find((result) => result.status === "Error");
  if (error || failed) {
    throw new Error(`Database migration ${failed?.migrationName ?? ""} failed: ${String(error)}`, {
      cause: error,
    });
  }
}
