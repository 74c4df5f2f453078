/**
 * On a translated route (here Mistral, OpenAI-compatible) a reasoning item's
 * `encrypted_content` is neither sent upstream nor billed; it used to be stored with the
 * response and copied into every continuation of the chain, so a client paid for a few tokens
 * and parked megabytes per request in the gateway's database, quadratically along a chain.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

const MODEL = "mistral-small-latest";

async function create(key: string, body: Record<string, unknown>) {
  const response = await gateway.request("/v1/responses", {
    key,
    json: { model: MODEL, max_output_tokens: 16, ...body },
  });
  const json = (await response.json()) as { id: string };
  expect(response.status, JSON.stringify(json).slice(0, 300)).toBe(200);
  return { id: json.id, cost: Number(response.headers.get("x-switchyard-cost-micros")) };
}

async function storedInputBytes(key: string, id: string): Promise<number> {
  let bytes = 0;
  let after: string | undefined;
  for (;;) {
    const query = `?order=asc&limit=100${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    const response = await gateway.request(`/v1/responses/${id}/input_items${query}`, { key });
    const page = (await response.json()) as {
      data: unknown[];
      has_more: boolean;
      last_id: string | null;
    };
    bytes += JSON.stringify(page.data).length;
    if (!page.has_more || !page.last_id) return bytes;
    after = page.last_id;
  }
}

describe("stored but unbilled input on a translated route", () => {
  it("does not keep (and copy into every continuation) encrypted reasoning it neither sends nor bills", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const small = await create(user.key, { input: "hi" });

    const blob = "A".repeat(2_000_000); // 2 MB, under the 10 MB body limit
    const parked = [
      { type: "reasoning", summary: [], encrypted_content: blob },
      { type: "message", role: "user", content: "hi" },
    ];
    const turns: { id: string; cost: number }[] = [];
    let previous: string | undefined;
    for (let turn = 0; turn < 4; turn++) {
      const created = await create(user.key, {
        input: parked,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      turns.push(created);
      previous = created.id;
    }
    const lastBytes = await storedInputBytes(user.key, previous!);
    // What a translated route neither sends nor bills is not kept either: the four turns' rows
    // hold their messages and reasoning items, not 2 + 4 + 6 + 8 MB of encrypted content.
    expect(lastBytes, `the last row holds ${lastBytes} bytes`).toBeLessThan(10_000);
    expect(turns.every((turn) => turn.cost <= small.cost * 2)).toBe(true);
  });
});
