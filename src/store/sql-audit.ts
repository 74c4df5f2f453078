/**
 * @module store/sql-audit
 * The audit trail over Kysely. `auditInsert` compiles one event's insert, so any transaction
 * body (transactions.ts) can write the event with the change it records: a credit without its
 * event cannot be committed. Snapshots are scrubbed of secret-named fields on the way in.
 */
import type { Compilable, CompiledQuery, Kysely, Selectable } from "kysely";
import type {
  AuditActorType,
  AuditEvent,
  AuditOrigin,
  AuditSnapshot,
  AuditStore,
  NewAuditEvent,
} from "./audit-types.ts";
import { newId } from "./ids.ts";
import type { AuditEventsTable, Database } from "./schema.ts";
import type { TransactionRunner } from "./transactions.ts";
import type { AccountRole } from "./types.ts";

/** Field names never written to a snapshot, at any depth: keys, hashes, tokens, secrets. */
const SECRET_FIELD = /^(key|api_key|secret|password|password_hash|key_hash|token|token_hash)$/i;

/** Deepest nesting kept in a snapshot; deeper values are replaced by a marker. */
const MAX_DEPTH = 8;

function scrub(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return "(nested too deep)";
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([name]) => !SECRET_FIELD.test(name))
        .map(([name, inner]) => [name, scrub(inner, depth + 1)]),
    );
  }
  return value;
}

function snapshot(value: AuditSnapshot | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(scrub(value));
}

function readSnapshot(text: string | null): AuditSnapshot | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as AuditSnapshot)
      : null;
  } catch {
    return null;
  }
}

/** The row of one event; `at` is its time (Unix ms). */
function auditRow(event: NewAuditEvent, at: number) {
  return {
    id: newId("aud"),
    created_at: at,
    action: event.action,
    actor_type: event.actor.type,
    actor_account_id: event.actor.accountId ?? null,
    actor_key_id: event.actor.keyId ?? null,
    actor_role: event.actor.role ?? null,
    actor_ip: event.actor.ip ?? null,
    target_type: event.target.type,
    target_id: event.target.id,
    before: snapshot(event.before),
    after: snapshot(event.after),
    reason: event.reason ?? null,
    request_id: event.requestId ?? null,
  };
}

/** The compiled insert of one event, to `yield` from a transaction body. */
export function auditInsert(
  db: Kysely<Database>,
  event: NewAuditEvent,
  at: number = Date.now(),
): CompiledQuery {
  return db.insertInto("audit_events").values(auditRow(event, at)).compile();
}

export function toAuditEvent(row: Selectable<AuditEventsTable>): AuditEvent {
  return {
    id: row.id,
    seq: Number(row.seq),
    createdAt: Number(row.created_at),
    action: row.action,
    actor: {
      type: row.actor_type as AuditActorType,
      accountId: row.actor_account_id,
      keyId: row.actor_key_id,
      role: row.actor_role as AccountRole | null,
      ip: row.actor_ip,
    },
    target: { type: row.target_type, id: row.target_id },
    before: readSnapshot(row.before),
    after: readSnapshot(row.after),
    reason: row.reason,
    requestId: row.request_id,
  };
}

export function sqlAuditStore(db: Kysely<Database>, transactions: TransactionRunner): AuditStore {
  return {
    recordAudit(event) {
      return transactions.run(function* () {
        const [row] = (yield db
          .insertInto("audit_events")
          .values(auditRow(event, Date.now()))
          .returningAll()
          .compile()) as Array<Selectable<AuditEventsTable>>;
        return toAuditEvent(row!);
      });
    },
    async listAudit(query) {
      let select = db.selectFrom("audit_events").selectAll();
      if (query.actorAccountId !== undefined)
        select = select.where("actor_account_id", "=", query.actorAccountId);
      if (query.action !== undefined) select = select.where("action", "=", query.action);
      if (query.targetId !== undefined) select = select.where("target_id", "=", query.targetId);
      if (query.from !== undefined) select = select.where("created_at", ">=", query.from);
      if (query.to !== undefined) select = select.where("created_at", "<", query.to);
      if (query.beforeSeq !== undefined) select = select.where("seq", "<", query.beforeSeq);
      const rows = await select.orderBy("seq", "desc").limit(query.limit).execute();
      return rows.map(toAuditEvent);
    },
  };
}

/**
 * Runs one change; given an origin, in one transaction with its audit event (`event` names the
 * action, target and before/after), so neither is written without the other.
 */
export async function insertWithAudit(
  db: Kysely<Database>,
  transactions: TransactionRunner,
  change: Compilable & { execute(): Promise<unknown> },
  origin: AuditOrigin | undefined,
  event: (origin: AuditOrigin) => Omit<NewAuditEvent, keyof AuditOrigin>,
  at: number,
): Promise<void> {
  if (!origin) {
    await change.execute();
    return;
  }
  await transactions.run(function* () {
    yield change.compile();
    yield auditInsert(db, { ...origin, ...event(origin) }, at);
  });
}
