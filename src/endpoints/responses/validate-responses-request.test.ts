import { describe, expect, it } from "vitest";
import type { CatalogModel } from "../../catalog/index.ts";
import type { Services } from "../../core/services.ts";
import type { StoredResponse } from "../../store/index.ts";
import type { ResponsesRequest } from "./schema.ts";
import {
  priorItems,
  resolveConversation,
  validateResponsesRequest,
} from "./validate-responses-request.ts";

const model = { id: "m", capabilities: { vision: false } } as unknown as CatalogModel;

function refusal(body: Record<string, unknown>) {
  try {
    validateResponsesRequest({ model: "m", input: "Hi", ...body } as ResponsesRequest, model);
  } catch (error) {
    return error as { code: string; param?: string; message: string };
  }
  return undefined;
}

describe("validateResponsesRequest", () => {
  it("refuses chat-only fields with what to send instead", () => {
    expect(refusal({ messages: [] })).toMatchObject({
      code: "unsupported_parameter",
      param: "messages",
      message: expect.stringMatching(/moved to 'input'/),
    });
    expect(refusal({ max_tokens: 10 })).toMatchObject({
      param: "max_tokens",
      message: expect.stringMatching(/max_output_tokens/),
    });
    expect(refusal({ response_format: { type: "json_object" } })).toMatchObject({
      param: "response_format",
      message: expect.stringMatching(/text\.format/),
    });
  });

  it("refuses hosted tools by index, background runs and priced service tiers", () => {
    expect(
      refusal({ tools: [{ type: "function", name: "f" }, { type: "file_search" }] }),
    ).toMatchObject({ code: "unsupported_parameter", param: "tools[1]" });
    expect(refusal({ background: true })).toMatchObject({ param: "background" });
    expect(refusal({ background: false })).toBeUndefined();
    expect(refusal({ service_tier: "priority" })).toMatchObject({ param: "service_tier" });
    expect(refusal({ service_tier: "default" })).toBeUndefined();
  });

  it("needs input, and images only for a model that sees", () => {
    expect(refusal({ input: undefined })).toMatchObject({ code: "missing_parameter" });
    expect(refusal({ input: [] })).toMatchObject({ code: "invalid_parameter", param: "input" });
    expect(
      refusal({
        input: [
          { role: "user", content: [{ type: "input_image", image_url: "https://x.test/a.png" }] },
        ],
      }),
    ).toMatchObject({ param: "input[0].content[0]" });
  });
});

function servicesWith(stored: StoredResponse | undefined): Services {
  return {
    store: {
      findResponse: async (accountId: string, id: string) =>
        stored && stored.accountId === accountId && stored.id === id ? stored : undefined,
    },
  } as unknown as Services;
}

const stored: StoredResponse = {
  id: "resp_1",
  accountId: "acct_a",
  model: "m",
  createdAt: 0,
  inputItems: [{ id: "msg_0", type: "message", role: "user", content: "Call it" }],
  response: {
    output: [{ id: "fc_1", type: "function_call", call_id: "call_1", name: "f", arguments: "{}" }],
  },
};

describe("resolveConversation", () => {
  it("puts the stored input and output before the request's input", async () => {
    const body = await resolveConversation(
      {
        model: "m",
        previous_response_id: "resp_1",
        input: [{ type: "function_call_output", call_id: "call_1", output: "done" }],
      },
      { accountId: "acct_a", services: servicesWith(stored), model },
    );
    expect(priorItems(body).map((item) => item.id)).toEqual(["msg_0", "fc_1"]);
  });

  it("finds only the account's own responses", async () => {
    await expect(
      resolveConversation(
        { model: "m", previous_response_id: "resp_1", input: "Hi" },
        { accountId: "acct_b", services: servicesWith(stored), model },
      ),
    ).rejects.toMatchObject({ code: "previous_response_not_found", param: "previous_response_id" });
  });

  it("refuses a tool output that answers no earlier call", async () => {
    await expect(
      resolveConversation(
        {
          model: "m",
          input: [{ type: "function_call_output", call_id: "call_1", output: "done" }],
        },
        { accountId: "acct_a", services: servicesWith(undefined), model },
      ),
    ).rejects.toMatchObject({ code: "invalid_parameter", param: "input[0].call_id" });
  });

  it("refuses an item id the conversation already has", async () => {
    await expect(
      resolveConversation(
        {
          model: "m",
          previous_response_id: "resp_1",
          input: [{ id: "fc_1", type: "function_call", call_id: "c", name: "f", arguments: "{}" }],
        },
        { accountId: "acct_a", services: servicesWith(stored), model },
      ),
    ).rejects.toMatchObject({ code: "invalid_parameter", param: "input[0].id" });
    await expect(
      resolveConversation(
        {
          model: "m",
          input: [
            { id: "msg_x", role: "user", content: "a" },
            { id: "msg_x", role: "user", content: "b" },
          ],
        },
        { accountId: "acct_a", services: servicesWith(undefined), model },
      ),
    ).rejects.toMatchObject({ code: "invalid_parameter", param: "input[1].id" });
  });

  it("refuses an image for a model without vision in a tool output or the continued conversation", async () => {
    const image = { type: "input_image" as const, image_url: "https://example.com/a.png" };
    await expect(
      resolveConversation(
        {
          model: "m",
          previous_response_id: "resp_1",
          input: [{ type: "function_call_output", call_id: "call_1", output: [image] }],
        },
        { accountId: "acct_a", services: servicesWith(stored), model },
      ),
    ).rejects.toMatchObject({ code: "invalid_parameter", param: "input[0].output[0]" });
    const withImage: StoredResponse = {
      ...stored,
      inputItems: [{ id: "msg_0", type: "message", role: "user", content: [image] }],
    };
    await expect(
      resolveConversation(
        { model: "m", previous_response_id: "resp_1", input: "Hi" },
        { accountId: "acct_a", services: servicesWith(withImage), model },
      ),
    ).rejects.toMatchObject({ code: "invalid_parameter", param: "previous_response_id" });
  });
});
