/**
 * @module store/stale-holds
 * Holds left open by a process that died before in-flight rows existed (or whose in-flight row
 * is gone): each hold with neither a charge nor a release nor an in-flight row, placed before a
 * given time, is released with a ledger row of its own. A hold with an in-flight row belongs to
 * a request under way, however long it lasts (a stream of hours), or to a dead instance's, which
 * `settleDeadRequests` charges for what it delivered: age alone never closes it. A video task's
 * hold is left alone too: the task settles it, however many restarts it lasts.
 */
import { type Kysely, sql } from "kysely";
import { entriesFor, type Queries } from "./billing-queries.ts";
import { newId } from "./ids.ts";
import type { Database } from "./schema.ts";
import type { TransactionRunner } from "./transactions.ts";

/** Releases the open holds created before `createdBefore`; resolves to how many it released. */
export async function releaseOpenHolds(
  db: Kysely<Database>,
  transactions: TransactionRunner,
  q: Queries,
  createdBefore: number,
  reason: string,
): Promise<number> {
  const open = await db
    .selectFrom("ledger_entries as hold")
    .selectAll("hold")
    .where("hold.kind", "=", "hold")
    .where("hold.created_at", "<", createdBefore)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("ledger_entries as closing")
            .select("closing.id")
            .whereRef("closing.request_id", "=", "hold.request_id")
            .where("closing.kind", "in", ["charge", "release"]),
        ),
      ),
    )
    // A request under way (or a dead instance's, settled by its in-flight row) is not stale.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("inflight_requests as inflight")
            .select("inflight.request_id")
            .whereRef("inflight.request_id", "=", "hold.request_id"),
        ),
      ),
    )
    // A video task's hold lasts as long as the task, across restarts; the task settles it.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("video_tasks as task")
            .select("task.id")
            .whereRef("task.id", "=", "hold.request_id"),
        ),
      ),
    )
    .execute();
  let released = 0;
  for (const hold of open) {
    const done = await transactions.run(function* () {
      const { closed } = yield* entriesFor(q.entries, hold.request_id ?? "");
      if (closed) return false;
      const { seq: _seq, ...entry } = hold;
      yield db
        .insertInto("ledger_entries")
        .values({
          ...entry,
          id: newId("led"),
          kind: "release",
          amount_micros: 0,
          hold_micros: -Number(hold.hold_micros),
          reason,
          created_at: Date.now(),
        })
        .compile();
      yield db
        .updateTable("accounts")
        .set({ held_micros: sql`held_micros - ${Number(hold.hold_micros)}` })
        .where("id", "=", hold.account_id)
        .compile();
      return true;
    });
    if (done) released += 1;
  }
  return released;
}
