/**
 * @module store/video-task-tables
 * Migration 0007: asynchronous video tasks (src/tasks): the task, its vendor task id, its
 * durable billing hold's state, its final record and its webhook delivery, and the accounts'
 * webhook signing secrets. A lease (`lease_owner`, `lease_until`) lets one instance at a time
 * poll a task; the unique index on (account_id, idempotency_key) makes a retried submission
 * find the first one.
 */
import type { Kysely, Migration } from "kysely";

export const videoTaskTablesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("video_tasks")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("key_id", "text")
      .addColumn("model", "text", (c) => c.notNull())
      .addColumn("route", "text", (c) => c.notNull())
      .addColumn("upstream_model", "text", (c) => c.notNull())
      .addColumn("provider_task_id", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("request_body", "text", (c) => c.notNull())
      .addColumn("idempotency_key", "text")
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("duration_seconds", "integer", (c) => c.notNull())
      .addColumn("resolution", "text", (c) => c.notNull())
      .addColumn("aspect_ratio", "text")
      .addColumn("hold_micros", "bigint", (c) => c.notNull())
      .addColumn("billing_state", "text", (c) => c.notNull())
      .addColumn("cost_micros", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("billed_seconds", "integer")
      .addColumn("provider_record", "text")
      .addColumn("progress", "integer")
      .addColumn("video_url", "text")
      .addColumn("seed", "bigint")
      .addColumn("usage", "text")
      .addColumn("error_code", "text")
      .addColumn("error_message", "text")
      .addColumn("webhook_url", "text")
      .addColumn("webhook_state", "text", (c) => c.notNull())
      .addColumn("webhook_attempts", "text")
      .addColumn("webhook_next_at", "bigint")
      .addColumn("next_poll_at", "bigint", (c) => c.notNull())
      .addColumn("polls", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("lease_owner", "text")
      .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("finished_at", "bigint")
      .execute();
    await db.schema
      .createIndex("video_tasks_account_created")
      .on("video_tasks")
      .columns(["account_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("video_tasks_idempotency")
      .on("video_tasks")
      .columns(["account_id", "idempotency_key"])
      .unique()
      .execute();
    await db.schema
      .createIndex("video_tasks_provider_id")
      .on("video_tasks")
      .column("provider_task_id")
      .execute();
    await db.schema
      .createIndex("video_tasks_due")
      .on("video_tasks")
      .columns(["status", "next_poll_at"])
      .execute();
    await db.schema
      .createTable("webhook_secrets")
      .addColumn("account_id", "text", (c) => c.primaryKey().references("accounts.id"))
      .addColumn("secret", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
  },
};
