/**
 * docs/responses.md says of input items that "a field a client adds besides is neither sent,
 * billed nor kept". On a native OpenAI route the client's items used to go upstream verbatim
 * (only `id` and `status` removed): a client could put fields in front of the vendor that the
 * gateway neither models, holds for nor bills.
 */
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
