/**
 * @module console/usage-view
 * Usage over a date range: spend and tokens by day, totals by model and key (and account, for
 * operators), and the records themselves in a table with CSV export. Used by the account's
 * usage page (`/v1/account/usage`) and the operators' (`/v1/admin/usage`).
 */
import { useState } from "preact/hooks";
import { api, apiAll, consoleFetch, download, type Query, toCsv } from "./api.ts";
import { BarChart, DayChart } from "./charts.tsx";
import { formatCount } from "./money.ts";
import type { ApiKey, List, UsageGroup, UsageRecord } from "./types.ts";
import { Badge, Empty, Field, Input, Money, Notice, useAction, useLoad, When } from "./ui.tsx";

type GroupName = "day" | "model" | "key" | "account";

/**
 * The range is in UTC days, as the per-day charts group (the API's `group_by=day`) and the
 * request times show: the fields are labelled so, and "today" is today in UTC.
 */
function isoDay(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

function nextDay(day: string): string | undefined {
  const at = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(at) ? undefined : new Date(at + 86_400_000).toISOString();
}

/** Every day from `from` to `to` (at most 366), so a chart spans the range asked for. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(start) || Number.isNaN(end)) return days;
  for (let at = start; at <= end && days.length < 366; at += 86_400_000)
    days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

const RECORD_COLUMNS = [
  "created_at",
  "request_id",
  "account_id",
  "key_id",
  "model",
  "endpoint",
  "status",
  "input_tokens",
  "output_tokens",
  "cost_micros",
  "latency_ms",
] as const;

export function statusTone(status: string): "ok" | "warn" | "bad" {
  return status === "succeeded" ? "ok" : status === "failed" ? "bad" : "warn";
}

export function UsageRecordsTable(props: {
  records: UsageRecord[];
  showAccount?: boolean;
  caption: string;
}) {
  if (props.records.length === 0) return <Empty>No requests in this range.</Empty>;
  return (
    <div class="table-wrap">
      <table data-testid="usage-table">
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">When (UTC)</th>
            {props.showAccount ? <th scope="col">Account</th> : null}
            <th scope="col">Model</th>
            <th scope="col">Key</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Input
            </th>
            <th scope="col" class="num">
              Output
            </th>
            <th scope="col" class="num">
              Cost
            </th>
            <th scope="col" class="num">
              Latency
            </th>
          </tr>
        </thead>
        <tbody>
          {props.records.map((record) => (
            <tr key={record.request_id}>
              <td>
                <When at={record.created_at} utc />
              </td>
              {props.showAccount ? (
                <td>
                  <code>{record.account_id ?? ""}</code>
                </td>
              ) : null}
              <td>{record.model}</td>
              <td>
                <code>{record.key_id ?? "—"}</code>
              </td>
              <td>
                <Badge tone={statusTone(record.status)}>{record.status}</Badge>
              </td>
              <td class="num">{formatCount(record.input_tokens ?? 0)}</td>
              <td class="num">{formatCount(record.output_tokens ?? 0)}</td>
              <td class="num">
                <Money micros={record.cost_micros} />
              </td>
              <td class="num">{record.latency_ms === null ? "—" : `${record.latency_ms} ms`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function UsageView(props: { path: string; groups: GroupName[]; admin?: boolean }) {
  const [from, setFrom] = useState(isoDay(-29));
  const [to, setTo] = useState(isoDay(0));
  const [account, setAccount] = useState("");
  const [applied, setApplied] = useState({ from, to, account });
  const exportAction = useAction();
  const base: Query = {
    from: applied.from ? `${applied.from}T00:00:00Z` : undefined,
    // `to` is exclusive: the day after the last one shown
    to: applied.to ? nextDay(applied.to) : undefined,
    ...(props.admin ? { account: applied.account || undefined } : {}),
  };
  const groups = useLoad(async () => {
    const entries = await Promise.all(
      props.groups.map(async (group) => {
        const list = await api<List<UsageGroup>>(props.path, {
          query: { ...base, group_by: group, limit: 1000 },
        });
        return [group, list.data] as const;
      }),
    );
    return Object.fromEntries(entries) as Partial<Record<GroupName, UsageGroup[]>>;
  }, [applied]);
  const records = useLoad(
    () => api<List<UsageRecord>>(props.path, { query: { ...base, limit: 100 } }),
    [applied],
  );

  const byDay = new Map((groups.data?.day ?? []).map((row) => [String(row.day).slice(0, 10), row]));
  const range = daysBetween(applied.from, applied.to);
  const days = (range.length ? range : [...byDay.keys()].sort()).map((day) => ({
    day,
    cost_micros: byDay.get(day)?.cost_micros ?? 0,
    tokens: (byDay.get(day)?.input_tokens ?? 0) + (byDay.get(day)?.output_tokens ?? 0),
  }));
  const keyNames = useLoad(
    async () =>
      props.admin
        ? new Map<string, string>()
        : new Map(
            (await apiAll<ApiKey>("/v1/account/keys")).data.map((key) => [
              key.id,
              `${key.name} (${key.prefix})`,
            ]),
          ),
    [],
  );
  const barsOf = (group: GroupName) =>
    (groups.data?.[group] ?? [])
      .map((row) => ({
        label:
          (group === "key" ? keyNames.data?.get(String(row.key)) : undefined) ??
          String(row[group] ?? "—"),
        cost_micros: row.cost_micros,
        tokens: row.input_tokens + row.output_tokens,
        requests: row.requests,
      }))
      .sort((a, b) => b.cost_micros - a.cost_micros);

  const exportCsv = () =>
    void exportAction.run(async () => {
      // A failed export (the connection, the session, the server) throws: its error is shown and
      // nothing is saved, rather than the rows at hand passed off as the whole range.
      const response = await consoleFetch(props.path, {
        query: { ...base, format: "csv", limit: 1000 },
      });
      let text = response.headers.get("content-type")?.startsWith("text/csv")
        ? await response.text()
        : undefined;
      // An API that answered without CSV: the records at hand, in the same columns.
      text ??= toCsv(
        [...RECORD_COLUMNS],
        (records.data?.data ?? []).map((record) =>
          RECORD_COLUMNS.map((column) => (record as unknown as Record<string, unknown>)[column]),
        ),
      );
      download(`switchyard-usage-${applied.from}-${applied.to}.csv`, text);
      return "CSV exported.";
    });

  return (
    <>
      <form
        class="card form inline-form"
        aria-label="Usage range"
        onSubmit={(event) => {
          event.preventDefault();
          setApplied({ from, to, account });
        }}
      >
        <Field id="usage-from" label="From (UTC)">
          <Input id="usage-from" type="date" value={from} onValue={setFrom} />
        </Field>
        <Field id="usage-to" label="To (UTC)">
          <Input id="usage-to" type="date" value={to} onValue={setTo} />
        </Field>
        {props.admin ? (
          <Field id="usage-account" label="Account id">
            <Input
              id="usage-account"
              value={account}
              onValue={setAccount}
              placeholder="all accounts"
            />
          </Field>
        ) : null}
        <button type="submit">Show</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            groups.reload();
            records.reload();
          }}
        >
          Refresh
        </button>
      </form>
      <Notice error={groups.error ?? records.error} />
      <div class="chart-grid" aria-busy={groups.loading}>
        <DayChart
          id="spend-by-day"
          title="Spend by day (USD)"
          money
          points={days.map((row) => ({ day: row.day, value: row.cost_micros }))}
        />
        <DayChart
          id="tokens-by-day"
          title="Tokens by day"
          points={days.map((row) => ({ day: row.day, value: row.tokens }))}
        />
        {props.groups.includes("model") ? (
          <BarChart id="by-model" title="By model" bars={barsOf("model")} />
        ) : null}
        {props.groups.includes("key") ? (
          <BarChart id="by-key" title="By key" bars={barsOf("key")} />
        ) : null}
        {props.groups.includes("account") ? (
          <BarChart id="by-account" title="By account" bars={barsOf("account")} />
        ) : null}
      </div>
      <div class="section-head">
        <h2>Requests</h2>
        <button type="button" class="secondary" onClick={exportCsv} disabled={exportAction.busy}>
          Export CSV
        </button>
      </div>
      <Notice error={exportAction.error} done={exportAction.done} />
      <UsageRecordsTable
        records={records.data?.data ?? []}
        showAccount={props.admin}
        caption="Requests, newest first"
      />
      {records.data?.has_more ? (
        <p class="muted">Showing the newest 100; export CSV for all of them.</p>
      ) : null}
    </>
  );
}
