/**
 * @module store/sql-usage
 * Reading usage records back: one account's or every account's (the admin report), filtered by
 * time, model, key and end user, newest first with the request id breaking ties, or totals
 * grouped by day, model, key or account in the order of the group. Both page by sort key
 * (`after`), never by offset, so a record written while a client pages is seen at most once.
 */
import { type Kysely, type Selectable, sql } from "kysely";
import type { BillingStore, UsageQuery, UsageRecord } from "./billing-types.ts";
import type { Database, UsageRecordsTable } from "./schema.ts";

export function usageFromRow(row: Selectable<UsageRecordsTable>): UsageRecord {
  return {
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    endpoint: row.endpoint,
    status: row.status,
    inputTokens: Number(row.input_tokens),
    cachedInputTokens: Number(row.cached_input_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    outputTokens: Number(row.output_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    images: Number(row.images),
    videoSeconds: Number(row.video_seconds),
    characters: Number(row.characters),
    costMicros: Number(row.cost_micros),
    heldMicros: Number(row.held_micros),
    usageSource: row.usage_source as UsageRecord["usageSource"],
    upstreamRequestId: row.upstream_request_id,
    latencyMs: row.latency_ms,
    ttfbMs: row.ttfb_ms,
    breakdown: row.breakdown ? (JSON.parse(row.breakdown) as Record<string, number>) : null,
    createdAt: Number(row.created_at),
    overrunMicros: Number(row.overrun_micros ?? 0),
    outputCapLoweredTo:
      row.output_cap_lowered_to === null ? null : Number(row.output_cap_lowered_to),
    endUser: row.end_user ?? null,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
  };
}

function filtered(db: Kysely<Database>, query: UsageQuery) {
  let select = db.selectFrom("usage_records");
  if (query.accountId !== undefined) select = select.where("account_id", "=", query.accountId);
  if (query.from !== undefined) select = select.where("created_at", ">=", query.from);
  if (query.to !== undefined) select = select.where("created_at", "<", query.to);
  if (query.model) select = select.where("model", "=", query.model);
  if (query.keyId) select = select.where("key_id", "=", query.keyId);
  if (query.endUser) select = select.where("end_user", "=", query.endUser);
  return select;
}

type UsageReads = Pick<BillingStore, "listUsage" | "groupUsage" | "findUsage">;

export function sqlUsageReads(db: Kysely<Database>, dialect: "sqlite" | "postgres"): UsageReads {
  return {
    async listUsage(query) {
      let select = filtered(db, query);
      const after = query.after;
      if (after) {
        select = select.where((eb) =>
          eb.or([
            eb("created_at", "<", after.createdAt),
            eb.and([
              eb("created_at", "=", after.createdAt),
              eb("request_id", "<", after.requestId),
            ]),
          ]),
        );
      }
      const rows = await select
        .selectAll()
        .orderBy("created_at", "desc")
        .orderBy("request_id", "desc")
        .limit(query.limit)
        .execute();
      return rows.map(usageFromRow);
    },

    async groupUsage(query, by) {
      const day =
        dialect === "postgres"
          ? sql<string>`to_char(to_timestamp(created_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`
          : sql<string>`strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')`;
      const group =
        by === "day"
          ? day
          : by === "model"
            ? sql<string>`model`
            : by === "account"
              ? sql<string>`account_id`
              : sql<string>`coalesce(key_id, '')`;
      let select = filtered(db, query)
        .select((eb) => [
          group.as("group"),
          eb.fn.countAll<number>().as("requests"),
          eb.fn.sum<number>("input_tokens").as("input_tokens"),
          eb.fn.sum<number>("output_tokens").as("output_tokens"),
          eb.fn.sum<number>("images").as("images"),
          eb.fn.sum<number>("video_seconds").as("video_seconds"),
          eb.fn.sum<number>("characters").as("characters"),
          eb.fn.sum<number>("cost_micros").as("cost_micros"),
        ])
        .groupBy(group);
      if (query.afterGroup !== undefined) select = select.having(group, ">", query.afterGroup);
      // The page boundary and the order use the same comparison (the column's collation).
      const rows = await select.orderBy(group).limit(query.limit).execute();
      return rows.map((row) => ({
        group: String(row.group),
        requests: Number(row.requests),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
        images: Number(row.images),
        videoSeconds: Number(row.video_seconds),
        characters: Number(row.characters),
        costMicros: Number(row.cost_micros),
      }));
    },

    async findUsage(requestId) {
      const row = await db
        .selectFrom("usage_records")
        .selectAll()
        .where("request_id", "=", requestId)
        .executeTakeFirst();
      return row && usageFromRow(row);
    },
  };
}
