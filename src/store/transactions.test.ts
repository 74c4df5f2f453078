import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";
import { sqliteTransactions } from "./transactions.ts";

interface Table {
  items: { id: string; amount: number };
}

function setup(log: string[] = []) {
  const sqlite = new SQLite(":memory:", { verbose: (statement) => log.push(String(statement)) });
  sqlite.exec("create table items (id text primary key, amount integer not null)");
  const db = new Kysely<Table>({ dialect: new SqliteDialect({ database: sqlite }) });
  const transactions = sqliteTransactions(sqlite, { prepare: (text) => sqlite.prepare(text) });
  const insert = (id: string, amount: number, alone?: boolean) =>
    transactions.run(
      function* () {
        yield db.insertInto("items").values({ id, amount }).compile();
        const rows = yield db.selectFrom("items").select("amount").where("id", "=", id).compile();
        return rows[0]?.amount;
      },
      alone === undefined ? undefined : { alone },
    );
  return { sqlite, insert };
}

describe("sqliteTransactions", () => {
  it("group-commits bodies started in the same turn and returns each body's result", async () => {
    const log: string[] = [];
    const { sqlite, insert } = setup(log);
    await insert("warm", 0); // a flush just ran, so the runner is not idle
    log.length = 0;
    const results = await Promise.all([insert("a", 1), insert("b", 2), insert("c", 3)]);
    expect(results).toEqual([1, 2, 3]);
    expect(log.filter((statement) => /^begin/i.test(statement))).toHaveLength(1);
    expect(log.filter((statement) => /^insert/i.test(statement))).toHaveLength(3);
    expect(log.filter((statement) => /^commit/i.test(statement))).toHaveLength(1);
    expect(sqlite.prepare("select count(*) as n from items").get()).toEqual({ n: 4 });
  });

  it("runs the first body after an idle spell at once, and batches the rest of its turn", async () => {
    const log: string[] = [];
    const { insert } = setup(log);
    await new Promise((resolve) => setTimeout(resolve, 10));
    log.length = 0;
    const first = insert("a", 1);
    // The idle body ran inside `run`, before this line: its commit is already logged.
    expect(log.filter((statement) => /^commit/i.test(statement))).toHaveLength(1);
    const results = await Promise.all([first, insert("b", 2), insert("c", 3)]);
    expect(results).toEqual([1, 2, 3]);
    expect(log.filter((statement) => /^commit/i.test(statement))).toHaveLength(2);
  });

  it("runs a body at once when its caller is alone, even right after a flush", async () => {
    const log: string[] = [];
    const { insert } = setup(log);
    await insert("warm", 0); // a flush just ran: without the hint the next body waits a turn
    log.length = 0;
    const waiting = insert("a", 1, false);
    expect(log.filter((statement) => /^commit/i.test(statement))).toHaveLength(0);
    await waiting;
    log.length = 0;
    const alone = insert("b", 2, true);
    // Ran inside `run`: its commit is already logged.
    expect(log.filter((statement) => /^commit/i.test(statement))).toHaveLength(1);
    expect(await alone).toBe(2);
  });

  it("lets a body that is alone join a batch already queued rather than overtake it", async () => {
    const log: string[] = [];
    const { insert } = setup(log);
    await insert("warm", 0);
    log.length = 0;
    const results = await Promise.all([insert("a", 1), insert("b", 2, true)]);
    expect(results).toEqual([1, 2]);
    expect(log.filter((statement) => /^commit/i.test(statement))).toHaveLength(1);
  });

  it("fails only the failing body of a batch; the others are committed", async () => {
    const { sqlite, insert } = setup();
    await insert("dup", 1);
    const outcomes = await Promise.allSettled([insert("x", 1), insert("dup", 2), insert("y", 3)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    expect(sqlite.prepare("select id, amount from items order by id").all()).toEqual([
      { id: "dup", amount: 1 },
      { id: "x", amount: 1 },
      { id: "y", amount: 3 },
    ]);
  });
});
