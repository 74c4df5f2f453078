/**
 * @module store/sql-tasks
 * Video tasks over SQL (see task-types.ts). A task's hold is durable on both databases: a `hold`
 * ledger entry and the account's `held_micros`, written in the transaction that creates the
 * task, because a task outlives the process (on SQLite the holds of ordinary requests live in
 * memory; the check counts them too). The charge or release is written in one transaction with
 * the task's billing state, keyed by the task id like any request's, so the ledger's unique
 * `(request_id, kind)` index makes it happen once whatever races or restarts come between.
 */
import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type SqlBool,
  sql,
} from "kysely";
import {
  availableFor,
  entriesFor,
  insertUsage,
  ledgerRow,
  type Queries,
  toRow,
} from "./billing-queries.ts";
import { storedInteger, storedText } from "./column-values.ts";
import type { HoldBook } from "./hold-book.ts";
import { newId } from "./ids.ts";
import type { Database, VideoTasksTable } from "./schema.ts";
import { checkSpendLimits } from "./spend-limits.ts";
import { fromRow, json, newRow, parse } from "./sql-task-rows.ts";
import { sqlWebhookSecrets } from "./sql-webhook-secrets.ts";
import type { TaskStore, VideoTask, VideoTaskState } from "./task-types.ts";
import type { TransactionRunner } from "./transactions.ts";
import { isUniqueViolation } from "./unique-violation.ts";

const UNFINISHED: VideoTaskState[] = ["queued", "running"];

/** Which tasks are due for some work at `now`. */
type DueFilter = (
  eb: ExpressionBuilder<Database, "video_tasks">,
  now: number,
) => Expression<SqlBool>;
/** Unfinished and due for a poll. */
const pollDue: DueFilter = (eb, now) =>
  eb.and([eb("status", "in", UNFINISHED), eb("next_poll_at", "<=", now)]);
/** A webhook delivery pending and due for an attempt. */
const webhookDue: DueFilter = (eb, now) =>
  eb.and([eb("webhook_state", "=", "pending"), eb("webhook_next_at", "<=", now)]);

export function sqlTaskStore(
  db: Kysely<Database>,
  transactions: TransactionRunner,
  q: Queries,
  holds?: HoldBook,
): TaskStore {
  const selectTask = () => db.selectFrom("video_tasks").selectAll();
  const byIdempotencyKey = async (accountId: string, key: string) => {
    const row = await selectTask()
      .where("account_id", "=", accountId)
      .where("idempotency_key", "=", key)
      .executeTakeFirst();
    return row && fromRow(row);
  };

  /**
   * Leases rows that are due (`due`, as of `now`) and whose lease ran out, one conditional update
   * each. The update asks again whether the row is due: between the select and the update
   * another instance may have finished the task or delivered its webhook (and ended its lease).
   */
  async function claim(
    due: DueFilter,
    order: "next_poll_at" | "webhook_next_at",
    now: number,
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<VideoTask[]> {
    const claimed: VideoTask[] = [];
    const candidates = await db
      .selectFrom("video_tasks")
      .select("id")
      .where((eb) => due(eb, now))
      .where("lease_until", "<", now)
      .orderBy(order)
      .limit(limit)
      .execute();
    for (const { id } of candidates) {
      const row = await db
        .updateTable("video_tasks")
        .set({ lease_owner: owner, lease_until: now + leaseMs })
        .where("id", "=", id)
        .where((eb) => due(eb, now))
        .where("lease_until", "<", now)
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(fromRow(row));
    }
    return claimed;
  }

  return {
    async createVideoTask(task) {
      const now = Date.now();
      try {
        return await transactions.run(function* () {
          if (task.idempotencyKey !== null) {
            const [existing] = (yield selectTask()
              .where("account_id", "=", task.accountId)
              .where("idempotency_key", "=", task.idempotencyKey)
              .compile()) as Array<Selectable<VideoTasksTable>>;
            if (existing) return { kind: "existing" as const, task: fromRow(existing) };
          }
          const availableMicros = yield* availableFor(q, task.accountId, holds);
          if (availableMicros < task.holdMicros)
            return { kind: "insufficient_balance" as const, availableMicros };
          const capped = yield* checkSpendLimits(
            db,
            {
              accountId: task.accountId,
              amountMicros: task.holdMicros,
              limits: task.spendLimits,
              lockAccount: !transactions.inProcess,
            },
            holds,
          );
          if (capped) return { kind: "spend_limit" as const, spendLimit: capped };
          // On PostgreSQL the update is conditional again, so a concurrent hold cannot overdraw.
          const placed = yield q.reserve({ accountId: task.accountId, amount: task.holdMicros });
          if (placed.length === 0)
            return { kind: "insufficient_balance" as const, availableMicros: 0 };
          yield q.insertLedger({
            id: newId("led"),
            account_id: task.accountId,
            kind: "hold",
            amount_micros: 0,
            hold_micros: task.holdMicros,
            request_id: task.id,
            key_id: task.keyId,
            model: task.model,
            breakdown: null,
            reason: "video task",
            created_at: now,
          });
          const row = newRow(task, now);
          yield db.insertInto("video_tasks").values(row).compile();
          return { kind: "created" as const, task: fromRow(row) };
        });
      } catch (error) {
        // Two submissions with one idempotency key raced: the first one's task stands.
        if (task.idempotencyKey !== null && isUniqueViolation(error)) {
          const existing = await byIdempotencyKey(task.accountId, task.idempotencyKey);
          if (existing) return { kind: "existing", task: existing };
        }
        throw error;
      }
    },

    async markVideoTaskSubmitted(id, submission) {
      const providerTaskId = storedText(submission.providerTaskId);
      const row = await db
        .updateTable("video_tasks")
        .set({
          provider_task_id: providerTaskId,
          provider_record: json(submission.providerRecord),
          next_poll_at: submission.nextPollAt,
          updated_at: Date.now(),
        })
        .where("id", "=", id)
        .where("status", "in", UNFINISHED)
        .where(({ exists, not, selectFrom }) =>
          not(
            exists(
              selectFrom("video_tasks as other")
                .select("other.id")
                .where("other.provider_task_id", "=", providerTaskId)
                .whereRef("other.route", "=", "video_tasks.route")
                .where("other.id", "!=", id),
            ),
          ),
        )
        .returning("id")
        .executeTakeFirst();
      if (row) return "followed";
      const task = await selectTask().where("id", "=", id).executeTakeFirst();
      return task && (UNFINISHED as readonly string[]).includes(task.status)
        ? "duplicate"
        : "finished";
    },

    async extendVideoTaskSubmission(id, nextPollAt) {
      await db
        .updateTable("video_tasks")
        .set({ next_poll_at: nextPollAt })
        .where("id", "=", id)
        .where("provider_task_id", "is", null)
        .where("status", "in", UNFINISHED)
        .execute();
    },

    async releaseIdempotencyKey(id) {
      await db
        .updateTable("video_tasks")
        .set({ idempotency_key: null, updated_at: Date.now() })
        .where("id", "=", id)
        .execute();
    },

    async findVideoTask(accountId, id) {
      const row = await selectTask()
        .where("account_id", "=", accountId)
        .where((eb) => eb.or([eb("id", "=", id), eb("provider_task_id", "=", id)]))
        .executeTakeFirst();
      return row && fromRow(row);
    },

    async findVideoTaskById(id) {
      const row = await selectTask().where("id", "=", id).executeTakeFirst();
      return row && fromRow(row);
    },

    async listVideoTasks(accountId, page) {
      let select = selectTask().where("account_id", "=", accountId);
      if (page.after !== undefined || page.afterKey !== undefined) {
        const cursor = page.afterKey
          ? { created_at: page.afterKey.createdAt, id: page.afterKey.id }
          : await db
              .selectFrom("video_tasks")
              .select(["created_at", "id"])
              .where("account_id", "=", accountId)
              .where("id", "=", page.after ?? "")
              .executeTakeFirst();
        if (!cursor) return [];
        select = select.where((eb) =>
          eb.or([
            eb("created_at", "<", cursor.created_at),
            eb.and([eb("created_at", "=", cursor.created_at), eb("id", "<", cursor.id)]),
          ]),
        );
      }
      const rows = await select
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(page.limit)
        .execute();
      return rows.map(fromRow);
    },

    claimDueVideoTasks(now, owner, leaseMs, limit) {
      return claim(pollDue, "next_poll_at", now, owner, leaseMs, limit);
    },

    async clearVideoTaskLeases(owner) {
      let update = db
        .updateTable("video_tasks")
        .set({ lease_owner: null, lease_until: 0 })
        .where("lease_until", ">", 0);
      if (owner !== undefined) update = update.where("lease_owner", "=", owner);
      const result = await update.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async recordVideoTaskProgress(id, owner, progress) {
      await db
        .updateTable("video_tasks")
        .set({
          status: progress.status,
          ...(progress.providerRecord === undefined
            ? {}
            : { provider_record: json(progress.providerRecord) }),
          ...(progress.progress === undefined
            ? {}
            : { progress: storedInteger(progress.progress, 0, 100) }),
          next_poll_at: progress.nextPollAt,
          polls: sql`polls + 1`,
          lease_until: 0,
          lease_owner: null,
          updated_at: Date.now(),
        })
        .where("id", "=", id)
        .where("lease_owner", "=", owner)
        .where("status", "in", UNFINISHED)
        .execute();
    },

    async finishVideoTask(id, outcome) {
      const row = await db
        .updateTable("video_tasks")
        .set({
          status: outcome.status,
          billing_state: "finalizing",
          ...(outcome.providerRecord === undefined
            ? {}
            : { provider_record: json(outcome.providerRecord) }),
          video_url: storedText(outcome.videoUrl),
          seed: outcome.seed ?? null,
          usage: json(outcome.usage ?? null),
          error_code: storedText(outcome.error?.code),
          error_message: storedText(outcome.error?.message),
          progress: outcome.status === "succeeded" ? 100 : sql`progress`,
          // Billed as whole seconds, rounded up (settle-task.ts), as the column keeps them.
          billed_seconds: storedInteger(outcome.reportedSeconds, 0, 2_147_483_647, Math.ceil),
          finished_at: outcome.finishedAt,
          updated_at: Date.now(),
          lease_owner: null,
          lease_until: 0,
        })
        .where("id", "=", id)
        .where("status", "in", UNFINISHED)
        .returning("id")
        .executeTakeFirst();
      return row !== undefined;
    },

    async settleVideoTask(id, record, result) {
      const charged = record.costMicros > 0;
      await transactions.run(function* () {
        // Taking the row first makes a second settler of the same task (PostgreSQL, another
        // instance) wait here and then find it no longer `finalizing`.
        const [task] = (yield db
          .updateTable("video_tasks")
          .set({ updated_at: Date.now() })
          .where("id", "=", id)
          .where("billing_state", "=", "finalizing")
          .returning("webhook_url")
          .compile()) as Array<{ webhook_url: string | null }>;
        if (!task) return;
        const { held, closed } = yield* entriesFor(q.entries, id);
        if (!closed) {
          const cost = Math.min(record.costMicros, held);
          yield q.insertLedger(
            ledgerRow(
              { ...record, requestId: id, costMicros: cost },
              charged ? "charge" : "release",
              -cost,
              -held,
              result.reason,
            ),
          );
          yield q.charge({ accountId: record.accountId, cost, held });
          yield* insertUsage(
            q,
            toRow({ ...record, requestId: id, heldMicros: held, costMicros: cost }),
          );
        }
        const now = Date.now();
        yield db
          .updateTable("video_tasks")
          .set({
            billing_state: charged ? "settled" : "released",
            cost_micros: Math.min(record.costMicros, held),
            billed_seconds: result.billedSeconds,
            webhook_state: task.webhook_url ? "pending" : "none",
            webhook_next_at: task.webhook_url ? now : null,
            updated_at: now,
          })
          .where("id", "=", id)
          .compile();
      });
    },

    async listFinalizingVideoTasks(limit) {
      const rows = await selectTask()
        .where("billing_state", "=", "finalizing")
        .orderBy("finished_at")
        .limit(limit)
        .execute();
      return rows.map(fromRow);
    },

    async countUnfinishedVideoTasks() {
      const rows = await db
        .selectFrom("video_tasks")
        .select(["status", (eb) => eb.fn.countAll<number | string>().as("count")])
        .where("status", "in", ["queued", "running"])
        .groupBy("status")
        .execute();
      const counts = { queued: 0, running: 0 };
      for (const row of rows) counts[row.status as keyof typeof counts] = Number(row.count);
      return counts;
    },

    claimDueWebhooks(now, owner, leaseMs, limit) {
      return claim(webhookDue, "webhook_next_at", now, owner, leaseMs, limit);
    },

    async recordWebhookAttempt(id, owner, attempt, next) {
      await transactions.run(function* () {
        const read = db
          .selectFrom("video_tasks")
          .select(["webhook_attempts", "webhook_state", "lease_owner"])
          .where("id", "=", id);
        // PostgreSQL: the row locked until the write, so two attempts recorded at once both
        // stay in the list (SQLite runs the body alone).
        const [row] = (yield (
          transactions.inProcess ? read : read.forUpdate()
        ).compile()) as Array<{
          webhook_attempts: string | null;
          webhook_state: string;
          lease_owner: string | null;
        }>;
        if (!row) return;
        const attempts = parse(row.webhook_attempts);
        const list = Array.isArray(attempts) ? attempts : [];
        // The outcome is this instance's to write only while it holds the delivery: an attempt
        // that outlived its lease (another instance took the delivery over, and may have
        // delivered it) is kept in the list but changes nothing else — except a success, which
        // says the receiver has the event whoever holds the lease now.
        const holder = row.webhook_state === "pending" && row.lease_owner === owner;
        const outcome = holder
          ? {
              webhook_state: next.state,
              webhook_next_at: next.nextAt,
              lease_owner: null,
              lease_until: 0,
            }
          : next.state === "delivered"
            ? { webhook_state: next.state, webhook_next_at: null }
            : {};
        yield db
          .updateTable("video_tasks")
          .set({
            webhook_attempts: JSON.stringify([...list, attempt]),
            ...outcome,
            updated_at: Date.now(),
          })
          .where("id", "=", id)
          .compile();
      });
    },

    ...sqlWebhookSecrets(db, transactions),
  };
}
