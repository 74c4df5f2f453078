/**
 * A native (OpenAI Responses) route stored the answer under the id the vendor chose, and the
 * `responses` table's primary key is `id` alone: a vendor that repeats an id (a proxy, an
 * OpenAI-compatible server, a replayed answer) made the store fail silently (only logged), and
 * a continuation or GET then served a different answer, or 404 although the client was told
 * `store: true`. The gateway answers and stores under its own ids.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeVendor } from "./support/fake-vendor.ts";
import { createUser, type TestGateway } from "./support/gateway-harness.ts";
import { gatewayOnFakeOpenAI } from "./support/vendor-models.ts";

let gateway: TestGateway;
let vendor: FakeVendor;
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ gateway, vendor, close } = await gatewayOnFakeOpenAI());
});
afterAll(() => close());

function answer(id: string, text: string) {
  return {
    id,
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-4o",
    output: [
      {
        id: `msg_${text}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
  };
}

describe("native route: a vendor that repeats its response ids", () => {
  it("a second account served a repeated vendor id can read back its own stored response", async () => {
    const alice = await createUser(gateway);
    const bob = await createUser(gateway);
    const a = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: alice.key, maxRetries: 0 });
    const b = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: bob.key, maxRetries: 0 });
    vendor.answer({ body: answer("resp_repeated1", "alice-secret") });
    vendor.answer({ body: answer("resp_repeated1", "bob-answer") });
    const first = await a.responses.create({ model: "rogue-gpt", input: "hi" });
    const second = await b.responses.create({ model: "rogue-gpt", input: "hi" });
    expect((second as unknown as { store: boolean }).store).toBe(true);
    // Bob was told his answer is stored; reading it back must work.
    const readBack = await b.responses.retrieve(second.id).then(
      (r) => r.output_text,
      (error: { status?: number }) => `error ${error.status}`,
    );
    expect({ first: first.id, second: second.id, readBack }).toEqual({
      first: first.id,
      second: second.id,
      readBack: "bob-answer",
    });
  });

  it("the same account continuing its latest response continues that response, not an older one", async () => {
    const carol = await createUser(gateway);
    const c = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: carol.key, maxRetries: 0 });
    vendor.answer({ body: answer("resp_repeated2", "old-answer") });
    vendor.answer({ body: answer("resp_repeated2", "new-answer") });
    await c.responses.create({ model: "rogue-gpt", input: "first question" });
    const latest = await c.responses.create({ model: "rogue-gpt", input: "second question" });
    expect(latest.output_text).toBe("new-answer");
    const stored = await c.responses.retrieve(latest.id);
    expect(stored.output_text).toBe("new-answer");
  });
});
