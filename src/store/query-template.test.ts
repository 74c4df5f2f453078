import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { queryTemplate } from "./query-template.ts";

interface Table {
  items: { id: string; amount: number; note: string | null };
}

describe("queryTemplate", () => {
  const db = new Kysely<Table>({
    dialect: new SqliteDialect({ database: new SQLite(":memory:") }),
  });

  it("compiles once and swaps the values into the same SQL", () => {
    const update = queryTemplate((args: { id: string; amount: number }) =>
      db
        .updateTable("items")
        .set({ amount: sql`amount + ${args.amount}` })
        .where("id", "=", args.id),
    );
    const first = update({ id: "a", amount: 5 });
    const second = update({ id: "b", amount: -7 });
    expect(second.sql).toBe(first.sql);
    expect(first.parameters).toEqual([5, "a"]);
    expect(second.parameters).toEqual([-7, "b"]);
  });

  it("keeps constants that are not arguments and passes nulls through", () => {
    const insert = queryTemplate((row: { id: string; note: string | null }) =>
      db.insertInto("items").values({ id: row.id, amount: 1, note: row.note }),
    );
    expect(insert({ id: "x", note: null }).parameters).toEqual(["x", 1, null]);
    expect(insert({ id: "y", note: "hi" }).parameters).toEqual(["y", 1, "hi"]);
  });
});
