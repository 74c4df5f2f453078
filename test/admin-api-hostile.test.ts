/**
 * The admin API's credit/debit endpoint when `billing.max_balance_micros` is lower than
 * a balance already held (the operator lowered it and restarted, or reloaded).
 *
 * docs/billing.md#the-ledger: "a credit that would raise the balance above
 * `billing.max_balance_micros` ... is refused"; a debit only has to stay above what requests in
 * flight hold. The conditional UPDATE in src/store/sql-ledger.ts (`adjustBalance`) applies
 * `balance_micros + amount <= max` to debits too, so an account above the maximum can only be
 * debited by enough to bring it under the maximum in one go: any smaller refund, correction or
 * clawback is refused, and reported as `balance_limit_exceeded` for a debit that lowers the
 * balance. The CLI's `accounts credit` shares the code path. (Fixed: the maximum bounds credits only.)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { startGateway } from "../src/main.ts";
import { createUser, requestsTo, startTestGateway } from "./support/gateway-harness.ts";

describe("a debit on an account above a lowered billing.max_balance_micros", () => {
  it("is accepted: it lowers the balance, which the maximum is there to bound", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "switchyard-admin-max-"));
    const database_url = join(cwd, "gateway.sqlite");
    const first = await startTestGateway({ config: { database_url } });
    const adminKey = first.adminKey;
    const user = await createUser(first, { balanceMicros: 5_000_000 });
    await first.close();

    // The operator lowers the maximum below this balance and restarts.
    const config = loadConfig({
      env: {},
      cwd,
      overrides: {
        database_url,
        log_level: "silent",
        server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
        billing: { max_balance_micros: 1_000_000 },
      },
    });
    const second = await startGateway({ env: {}, config, print: () => {} });
    try {
      const request = requestsTo(second.url);
      const debit = await request(`/v1/admin/accounts/${user.accountId}/credit`, {
        key: adminKey,
        json: { amount_micros: -1_000_000, reason: "refund" },
      });
      const body = (await debit.json()) as { balance_micros?: number; error?: { code: string } };
      // Expected: 200 with balance 4000000 (still above the maximum, but lower). Before the fix: 400
      // balance_limit_exceeded, for a debit.
      expect({
        status: debit.status,
        balance: body.balance_micros,
        error: body.error?.code,
      }).toEqual({ status: 200, balance: 4_000_000, error: undefined });
    } finally {
      await second.close();
    }
  });
});
