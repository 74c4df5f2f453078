/**
 * @module console/admin/audit
 * The audit trail: who changed what (credits, keys, codes, logins), filtered by action or
 * actor, newest first, page by page.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import type { List } from "../types.ts";
import { Empty, Field, Input, MoreButton, Notice, Page, useAction, useLoad, When } from "../ui.tsx";

interface AuditEvent {
  id: string;
  created_at: string;
  action: string;
  actor?: { type?: string; account_id?: string | null; key_id?: string | null; ip?: string | null };
  target?: { type?: string; id?: string | null };
  before?: unknown;
  after?: unknown;
  reason?: string | null;
  request_id?: string | null;
}

function change(event: AuditEvent): string {
  const show = (value: unknown) =>
    value === null || value === undefined ? "" : JSON.stringify(value);
  const before = show(event.before);
  const after = show(event.after);
  if (before && after) return `${before} → ${after}`;
  return after || before;
}

export function AdminAuditPage() {
  const [action, setAction] = useState("");
  const [actor, setActor] = useState("");
  const [filter, setFilter] = useState({ action: "", actor: "" });
  const [events, setEvents] = useState<AuditEvent[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const more = useAction();
  const first = useLoad(async () => {
    const page = await api<List<AuditEvent>>("/v1/admin/audit", {
      query: { ...filter, limit: 50 },
    });
    setEvents(page.data);
    setCursor(page.next_cursor ?? null);
    setHasMore(Boolean(page.has_more && page.next_cursor));
    return page;
  }, [filter]);
  const loadMore = () =>
    void more.run(async () => {
      const page = await api<List<AuditEvent>>("/v1/admin/audit", {
        query: { ...filter, limit: 50, cursor },
      });
      setEvents((known) => [...known, ...page.data]);
      setCursor(page.next_cursor ?? null);
      setHasMore(Boolean(page.has_more && page.next_cursor));
    });
  return (
    <Page title="Audit trail">
      <form
        class="card form inline-form"
        aria-label="Search"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter({ action: action.trim(), actor: actor.trim() });
        }}
      >
        <Field id="audit-action" label="Action">
          <Input
            id="audit-action"
            value={action}
            onValue={setAction}
            placeholder="e.g. account.credit"
          />
        </Field>
        <Field id="audit-actor" label="Actor account id">
          <Input id="audit-actor" value={actor} onValue={setActor} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <Notice error={first.error ?? more.error} />
      {events.length === 0 && !first.loading ? (
        <Empty>No events.</Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="audit-table">
            <caption class="sr-only">Audit events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Actor</th>
                <th scope="col">Target</th>
                <th scope="col">Change</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id}>
                  <td>
                    <When at={event.created_at} />
                  </td>
                  <td class="nowrap">
                    <code>{event.action}</code>
                  </td>
                  <td>
                    {event.actor?.type ?? ""} <code>{event.actor?.account_id ?? ""}</code>
                    {event.actor?.ip ? <div class="muted">{event.actor.ip}</div> : null}
                  </td>
                  <td>
                    {event.target?.type ?? ""} <code>{event.target?.id ?? ""}</code>
                  </td>
                  <td class="change">{change(event)}</td>
                  <td>{event.reason ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <MoreButton hasMore={hasMore} busy={more.busy} onMore={loadMore} />
    </Page>
  );
}
