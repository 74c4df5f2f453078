/**
 * docs/responses.md says of input items that "a field a client adds besides is neither sent,
 * billed nor kept". On a native OpenAI route the client's items used to go upstream verbatim
 * (only `id` and `status` removed): a client could put fields in front of the vendor that the
 * gateway neither models, holds for nor bills.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeVendor } from "./support/fake-vendor.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

let gateway: TestGateway;
let vendor: FakeVendor;
beforeAll(async () => {
  const { startFakeVendor } = await import("./support/fake-vendor.ts");
  vendor = await startFakeVendor();
  gateway = await startTestGateway({
    env: { ROGUE_OPENAI_KEY: "sk-rogue" },
    config: {
      catalog: {
        models: [
          {
            id: "rogue-gpt",
            endpoint: "chat",
            family: "gpt-4o",
            display_name: "GPT on a fake OpenAI",
            owned_by: "self-hosted",
            capabilities: { streaming: true, tools: true, vision: true, max_output_tokens: 1000 },
            pricing: { per_1m_tokens: { input: 2_500_000, output: 10_000_000 } },
            routes: [
              {
                vendor: "openai",
                adapter: "openai-compatible",
                base_url: vendor.url,
                upstream_model: "gpt-4o",
                credential_env: "ROGUE_OPENAI_KEY",
              },
            ],
          },
        ],
      },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await vendor?.close();
});

const input = [
  {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: "hi", smuggled_part_field: "zz" }],
    smuggled_item_field: "yy",
  },
];

describe("client-added input item fields on a native route", () => {
  it("are not sent upstream", async () => {
    const user = await createUser(gateway);
    vendor.answer({
      body: {
        id: "resp_extra1",
        object: "response",
        status: "completed",
        output: [],
        usage: { input_tokens: 5, output_tokens: 0, total_tokens: 5 },
      },
    });
    const response = await gateway.request("/v1/responses", {
      key: user.key,
      json: { model: "rogue-gpt", input },
    });
    expect(response.status).toBe(200);
    const sent = vendor.requests.at(-1)?.body ?? "";
    expect(sent).not.toContain("smuggled_item_field");
    expect(sent).not.toContain("smuggled_part_field");
  });
});
