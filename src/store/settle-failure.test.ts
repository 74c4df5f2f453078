/**
 * A settlement the embedded SQLite file refuses (a full disk, a lock held past the busy timeout)
 * must keep the request's hold until a later write of the same closing succeeds: the money it
 * covers is still promised, so no other request may take it meanwhile, and the closing written
 * later records the hold and removes the request's in-flight row as the first write would have.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { chatUsageRecord } from "../../test/support/usage-record.ts";
import { openStore, type Store } from "./index.ts";

const HOLD = { endpoint: "/v1/chat/completions", instanceId: "test", floorMicros: 0 };

const record = (accountId: string, requestId: string, costMicros: number) =>
  chatUsageRecord({ requestId, accountId, keyId: null, costMicros, createdAt: Date.now() });

describe("a settlement SQLite refuses", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(): Promise<{ store: Store; other: Database.Database; accountId: string }> {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-settle-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "gateway.db");
    const store = await openStore(file);
    cleanups.push(() => store.close());
    // Another connection to the same file (as the CLI would open) makes writes fail on demand.
    const other = new Database(file);
    cleanups.push(() => other.close());
    const account = await store.createAccount({
      email: "payer@example.com",
      passwordHash: null,
      role: "user",
    });
    await store.adjustBalance({ accountId: account.id, amountMicros: 1_000, reason: "test" });
    return { store, other, accountId: account.id };
  }

  const failUsageWrites = (other: Database.Database) =>
    other.exec(`create trigger refuse_usage before insert on usage_records
      begin select raise(abort, 'database or disk is full'); end`);
  const allowUsageWrites = (other: Database.Database) => other.exec("drop trigger refuse_usage");

  it("keeps the hold: another request cannot take the money it covers", async () => {
    const { store, other, accountId } = await setUp();
    const first = `${accountId}-first`;
    expect(
      await store.placeHold({
        requestId: first,
        accountId,
        keyId: "k",
        model: "m",
        ...HOLD,
        amountMicros: 600,
      }),
    ).toEqual({ placed: true });
    failUsageWrites(other);
    await expect(store.settle(record(accountId, first, 500))).rejects.toThrow(/disk is full/);
    allowUsageWrites(other);
    // The first request's charge is still to be written: 600 of the 1,000 stay held.
    const second = await store.placeHold({
      requestId: `${accountId}-second`,
      accountId,
      keyId: "k",
      model: "m",
      ...HOLD,
      amountMicros: 600,
    });
    expect(second).toEqual({ placed: false, availableMicros: 400 });
    expect((await store.findAccountById(accountId))?.heldMicros).toBe(600);
  });

  it("writes the closing later with its hold and without leaving the in-flight row", async () => {
    const { store, other, accountId } = await setUp();
    const stream = `${accountId}-stream`;
    await store.placeHold({
      requestId: stream,
      accountId,
      keyId: "k",
      model: "m",
      ...HOLD,
      amountMicros: 600,
    });
    await store.recordInflight(stream, 100);
    failUsageWrites(other);
    const closing = record(accountId, stream, 500);
    await expect(store.settle(closing)).rejects.toThrow(/disk is full/);
    allowUsageWrites(other);
    expect(await store.settle(closing)).toEqual({ alreadySettled: false, ownClosing: true });
    expect((await store.findUsage(stream))?.heldMicros).toBe(600);
    const left = other
      .prepare("select count(*) as n from inflight_requests where request_id = ?")
      .get(stream) as { n: number };
    expect(left.n, "the in-flight row of a settled request").toBe(0);
    expect(await store.findAccountById(accountId)).toMatchObject({
      balanceMicros: 500,
      heldMicros: 0,
    });
    expect((await store.verify()).problems).toEqual([]);
  });
});
