/**
 * @module cli/audit
 * `switchyard audit`: the audit trail from the configured database, newest first, as a table or
 * (`--json`) as the objects `GET /v1/admin/audit` answers.
 */
import { parseArgs } from "node:util";
import { describeAuditEvent } from "../endpoints/admin/audit-route.ts";
import { usage } from "./exit.ts";
import { type Out, table } from "./format.ts";
import { withStore } from "./manage.ts";

type AuditJson = ReturnType<typeof describeAuditEvent>;

/** The widest a CHANGE cell gets before it is cut. */
const CHANGE_WIDTH = 72;

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `balance_micros: 0 → 5000000, amount_micros: 5000000`: what the event changed, in one line. */
export function describeChange(event: Pick<AuditJson, "before" | "after">): string {
  const before = event.before ?? {};
  const after = event.after ?? {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const parts = names.flatMap((name) => {
    const had = name in before;
    const has = name in after;
    if (had && has) {
      const [from, to] = [show(before[name]), show(after[name])];
      return from === to ? [] : [`${name}: ${from} → ${to}`];
    }
    return [has ? `${name}: ${show(after[name])}` : `${name}: ${show(before[name])} → (none)`];
  });
  const line = parts.join(", ");
  return line.length > CHANGE_WIDTH ? `${line.slice(0, CHANGE_WIDTH - 1)}…` : line;
}

function describeActor(actor: AuditJson["actor"]): string {
  const who = [actor.account_id, actor.key_id].filter(Boolean).join("/");
  return who ? `${actor.type}:${who}` : actor.type;
}

export function printAudit(out: Out, events: AuditJson[]): void {
  if (events.length === 0) {
    out("No audit events.");
    return;
  }
  const rows = events.map((event) => [
    event.created_at,
    event.action,
    describeActor(event.actor),
    `${event.target.type}:${event.target.id ?? "-"}`,
    describeChange(event),
    event.reason ?? "",
  ]);
  for (const line of table([["TIME", "ACTION", "ACTOR", "TARGET", "CHANGE", "REASON"], ...rows]))
    out(line.trimEnd());
}

export async function runAuditCommand(args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      action: { type: "string" },
      actor: { type: "string" },
      target: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" },
    },
  });
  if (positionals.length > 0) throw usage(`audit takes no arguments, got '${positionals[0]}'`);
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!/^\d+$/.test(values.limit ?? "50") || limit < 1 || limit > 1000)
    throw usage(`--limit must be an integer 1-1000, got '${values.limit}'`);
  return withStore(async (store) => {
    const events = await store.listAudit({
      action: values.action,
      actorAccountId: values.actor,
      targetId: values.target,
      limit,
    });
    const described = events.map(describeAuditEvent);
    if (values.json) out(JSON.stringify(described, null, 2));
    else printAudit(out, described);
    return 0;
  });
}
