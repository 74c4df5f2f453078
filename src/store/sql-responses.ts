/**
 * @module store/sql-responses
 * Stored Responses API answers (`responses` table, migration 0008) over Kysely: written once
 * when a response with `store` finishes, read back and deleted only by the account that made it.
 */
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import type { ResponseStore } from "./types.ts";

export function sqlResponseStore(db: Kysely<Database>): ResponseStore {
  return {
    async saveResponse(record) {
      await db
        .insertInto("responses")
        .values({
          id: record.id,
          account_id: record.accountId,
          model: record.model,
          response: JSON.stringify(record.response),
          input_items: JSON.stringify(record.inputItems),
          created_at: record.createdAt,
        })
        .execute();
    },
    async findResponse(accountId, id) {
      const row = await db
        .selectFrom("responses")
        .selectAll()
        .where("id", "=", id)
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        id: row.id,
        accountId: row.account_id,
        model: row.model,
        response: JSON.parse(row.response) as Record<string, unknown>,
        inputItems: JSON.parse(row.input_items) as Record<string, unknown>[],
        createdAt: Number(row.created_at),
      };
    },
    async deleteResponse(accountId, id) {
      const result = await db
        .deleteFrom("responses")
        .where("id", "=", id)
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
