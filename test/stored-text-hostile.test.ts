/**
 * What a client or a vendor writes into the usage record must not stop its settlement. PostgreSQL
 * refuses a NUL character in a `text` column (SQLite takes it): a client's `user` of
 * `"team\u0000a"` made the settlement fail after the vendor had answered — the answer unpaid,
 * the vendor's cost the operator's. Runs on both backends (the PostgreSQL pass of CI is where it
 * bites).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
});
