/**
 * @module endpoints/billing/usage-report
 * Usage records and their totals, for one account (`GET /v1/account/usage`) or across accounts
 * (`GET /v1/admin/usage`): filters (time, model, key, end user, account), grouping by day,
 * model, key or account, cursor pages (store/cursor.ts) and a CSV export with the same columns
 * and values as the JSON, streamed a store page at a time so any number of rows is fine.
 */
import { Readable } from "node:stream";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { type CursorPart, decodeCursor, pageOf } from "../../store/cursor.ts";
import type { UsageGroup, UsageGroupBy, UsageQuery, UsageRecord } from "../../store/index.ts";

export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;

const GroupBy = (values: UsageGroupBy[]) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description: "Totals per group instead of records, in the order of the group key." },
  );

const commonFilters = {
  from: Type.Optional(Type.String({ description: "ISO 8601 time or Unix seconds (inclusive)." })),
  to: Type.Optional(Type.String({ description: "ISO 8601 time or Unix seconds (exclusive)." })),
  model: Type.Optional(Type.String({ description: "Catalog model id." })),
  key: Type.Optional(Type.String({ description: "API key id." })),
  user: Type.Optional(
    Type.String({ description: "End user the client named (`user`, `metadata.user_id`)." }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: "Rows per page; default 100." }),
  ),
  cursor: Type.Optional(Type.String({ description: "`next_cursor` of the previous page." })),
  format: Type.Optional(
    Type.Union([Type.Literal("json"), Type.Literal("csv")], {
      description: "`csv`: every matching row as CSV (also `Accept: text/csv`).",
    }),
  ),
};

export const AccountUsageQuery = Type.Object({
  ...commonFilters,
  group_by: Type.Optional(GroupBy(["day", "model", "key"])),
});

export const AdminUsageQuery = Type.Object({
  ...commonFilters,
  account: Type.Optional(Type.String({ description: "Account id." })),
  group_by: Type.Optional(GroupBy(["day", "model", "key", "account"])),
});

export type UsageReportQuery = Static<typeof AdminUsageQuery>;

function parseTime(value: string | undefined, param: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const millis = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(millis)) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid '${param}': expected ISO 8601 or Unix seconds.` },
      { param },
    );
  }
  return millis;
}

/** A usage record as every report shows it (JSON and CSV alike). */
export function describeUsage(record: UsageRecord) {
  return {
    request_id: record.requestId,
    account_id: record.accountId,
    model: record.model,
    endpoint: record.endpoint,
    key_id: record.keyId,
    status: record.status,
    input_tokens: record.inputTokens,
    cached_input_tokens: record.cachedInputTokens,
    cache_write_tokens: record.cacheWriteTokens,
    output_tokens: record.outputTokens,
    reasoning_tokens: record.reasoningTokens,
    images: record.images,
    video_seconds: record.videoSeconds,
    characters: record.characters,
    cost_micros: record.costMicros,
    held_micros: record.heldMicros,
    overrun_micros: record.overrunMicros ?? 0,
    output_cap_lowered_to: record.outputCapLoweredTo ?? null,
    breakdown: record.breakdown ?? {},
    usage_source: record.usageSource,
    upstream_request_id: record.upstreamRequestId,
    latency_ms: record.latencyMs,
    ttfb_ms: record.ttfbMs,
    user: record.endUser ?? null,
    metadata: record.metadata ?? {},
    created_at: new Date(record.createdAt).toISOString(),
  };
}

function describeGroup(by: UsageGroupBy, group: UsageGroup) {
  return {
    [by]: group.group,
    requests: group.requests,
    input_tokens: group.inputTokens,
    output_tokens: group.outputTokens,
    images: group.images,
    video_seconds: group.videoSeconds,
    characters: group.characters,
    cost_micros: group.costMicros,
  };
}

type Row = Record<string, unknown>;

/** One report: its filter, its grouping, where it starts, and a way to read a page of it. */
interface Report {
  groupBy: UsageGroupBy | undefined;
  limit: number;
  start: readonly CursorPart[] | undefined;
  /** `limit + 1` rows after `after` (the extra one says there is more). */
  fetch(after: readonly CursorPart[] | undefined, limit: number): Promise<Row[]>;
  /** The cursor of a row. */
  sortKey(row: Row): CursorPart[];
}

function prepare(services: Services, accountId: string | undefined, query: UsageReportQuery) {
  const filter: UsageQuery = {
    from: parseTime(query.from, "from"),
    to: parseTime(query.to, "to"),
    limit: 0,
    ...(accountId !== undefined ? { accountId } : {}),
    ...(query.model ? { model: query.model } : {}),
    ...(query.key ? { keyId: query.key } : {}),
    ...(query.user ? { endUser: query.user } : {}),
  };
  const groupBy = query.group_by;
  const limit = query.limit ?? DEFAULT_PAGE;
  if (groupBy) {
    const report: Report = {
      groupBy,
      limit,
      start: query.cursor === undefined ? undefined : decodeCursor(query.cursor, ["string"]),
      async fetch(after, size) {
        const groups = await services.store.groupUsage(
          { ...filter, limit: size, ...(after ? { afterGroup: String(after[0]) } : {}) },
          groupBy,
        );
        return groups.map((group) => describeGroup(groupBy, group));
      },
      sortKey: (row) => [String(row[groupBy])],
    };
    return report;
  }
  const keyed = new WeakMap<Row, CursorPart[]>();
  const report: Report = {
    groupBy,
    limit,
    start:
      query.cursor === undefined ? undefined : decodeCursor(query.cursor, ["number", "string"]),
    async fetch(after, size) {
      const records = await services.store.listUsage({
        ...filter,
        limit: size,
        ...(after ? { after: { createdAt: Number(after[0]), requestId: String(after[1]) } } : {}),
      });
      return records.map((record) => {
        const row = describeUsage(record);
        keyed.set(row, [record.createdAt, record.requestId]);
        return row;
      });
    },
    sortKey: (row) => keyed.get(row) ?? [],
  };
  return report;
}

/** A page of a report (the shape of `Page`, open to the MCP tools' structured results). */
export type UsagePage = {
  object: "list";
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
  group_by?: UsageGroupBy;
};

/** One page of a usage report (the JSON answer). */
export async function usagePage(
  services: Services,
  accountId: string | undefined,
  query: UsageReportQuery,
): Promise<UsagePage> {
  const report = prepare(services, accountId, query);
  const rows = await report.fetch(report.start, report.limit + 1);
  const page = pageOf(rows, report.limit, report.sortKey, (row) => row);
  return report.groupBy ? { ...page, group_by: report.groupBy } : { ...page };
}

/** A text cell a spreadsheet would take for a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  // Clients choose some texts (`user`, metadata): one that starts like a formula is written
  // with a leading apostrophe, so a spreadsheet shows it rather than evaluating it.
  if (typeof value !== "number" && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvLine = (cells: readonly unknown[]) => `${cells.map(csvCell).join(",")}\r\n`;

/** The columns of a report, whether it has rows or not. */
function columnsOf(groupBy: UsageGroupBy | undefined): string[] {
  if (groupBy) return Object.keys(describeGroup(groupBy, EMPTY_GROUP));
  return Object.keys(describeUsage(EMPTY_RECORD));
}

const EMPTY_GROUP: UsageGroup = {
  group: "",
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  images: 0,
  videoSeconds: 0,
  characters: 0,
  costMicros: 0,
};

const EMPTY_RECORD: UsageRecord = {
  requestId: "",
  accountId: "",
  keyId: null,
  model: "",
  endpoint: "",
  status: "succeeded",
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  images: 0,
  videoSeconds: 0,
  characters: 0,
  costMicros: 0,
  heldMicros: 0,
  usageSource: null,
  upstreamRequestId: null,
  latencyMs: null,
  ttfbMs: null,
  breakdown: null,
  createdAt: 0,
};

/**
 * Every row of the report from its cursor on, as CSV with a header row: read from the store
 * `MAX_PAGE` rows at a time while the client takes them. The first page is read before the
 * answer starts, so a bad filter or cursor is still a plain `400`.
 */
export async function usageCsv(
  services: Services,
  accountId: string | undefined,
  query: UsageReportQuery,
): Promise<Readable> {
  const report = prepare(services, accountId, query);
  const columns = columnsOf(report.groupBy);
  let rows = await report.fetch(report.start, MAX_PAGE + 1);
  async function* lines() {
    yield csvLine(columns);
    for (;;) {
      const kept = rows.slice(0, MAX_PAGE);
      let chunk = "";
      for (const row of kept) chunk += csvLine(columns.map((column) => row[column]));
      if (chunk) yield chunk;
      const last = kept.at(-1);
      if (rows.length <= MAX_PAGE || last === undefined) return;
      rows = await report.fetch(report.sortKey(last), MAX_PAGE + 1);
    }
  }
  return Readable.from(lines(), { objectMode: false });
}

/** True when the client asked for CSV: `format=csv`, or `Accept: text/csv` without `format`. */
export function wantsCsv(request: FastifyRequest, query: UsageReportQuery): boolean {
  if (query.format !== undefined) return query.format === "csv";
  const accept = request.headers.accept ?? "";
  return /(^|,)\s*text\/csv\b/i.test(accept);
}

/** Answers a usage report as a JSON page or as a CSV download. */
export async function answerUsage(
  services: Services,
  accountId: string | undefined,
  query: UsageReportQuery,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  if (!wantsCsv(request, query)) return usagePage(services, accountId, query);
  const body = await usageCsv(services, accountId, query);
  reply.header("content-type", "text/csv; charset=utf-8");
  reply.header("content-disposition", 'attachment; filename="usage.csv"');
  return body;
}
