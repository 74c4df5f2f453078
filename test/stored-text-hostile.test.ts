/**
 * What a client or a vendor writes into the usage record must not stop its settlement, and what
 * a client writes through the account API must not fail in the database. PostgreSQL
 * refuses a NUL character in a `text` column (SQLite takes it): a client's `user` of
 * `"team\u0000a"` made the settlement fail after the vendor had answered — the answer unpaid,
 * the vendor's cost the operator's. Runs on both backends (the PostgreSQL pass of CI is where it
 * bites).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway?.close());

describe("a NUL character in what the usage record keeps", () => {
  it("settles and charges a chat request whose `user` holds a NUL character", async () => {
    const payer = await createUser(gateway, { balanceMicros: 1_000_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: payer.key,
      json: {
        model: "gpt-4o-mini",
        max_tokens: 16,
        user: "team\u0000a",
        messages: [{ role: "user", content: "hello" }],
      },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const body = (await response.json()) as { usage: { total_tokens: number } };
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    expect(await balanceOf(gateway, payer.key)).toBeLessThan(1_000_000);
  });

  it("refuses a NUL character in the account API's bodies with a 400, not a 500", async () => {
    // On PostgreSQL a key named "a\u0000b" failed in the database (500 internal_error); on
    // SQLite it was kept. No name, note or setting holds one.
    const user = await createUser(gateway, { balanceMicros: 0 });
    const response = await gateway.request("/v1/account/keys", {
      key: user.key,
      json: { name: "a\u0000b" },
    });
    const error = await expectGatewayError(response, {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_request",
    });
    expect(error.message).toContain("`name`");
  });
});
