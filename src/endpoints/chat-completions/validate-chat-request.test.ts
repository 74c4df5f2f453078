import { describe, expect, it } from "vitest";
import type { CatalogModel } from "../../catalog/index.ts";
import type { GatewayError } from "../../errors/index.ts";
import type { ChatCompletionRequest } from "./schema.ts";
import { validateChatRequest } from "./validate-chat-request.ts";

const model = (vision: boolean) =>
  ({
    id: "m",
    capabilities: { vision },
    pricing: {},
    routes: [],
    resolvedRoutes: [],
  }) as unknown as CatalogModel;

function failure(body: unknown, vision = true): GatewayError | undefined {
  try {
    validateChatRequest(body as ChatCompletionRequest, model(vision));
    return undefined;
  } catch (error) {
    return error as GatewayError;
  }
}

describe("validateChatRequest", () => {
  it("accepts a tool message that answers an earlier call", () => {
    expect(
      failure({
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "c1", content: "ok" },
        ],
      }),
    ).toBeUndefined();
  });

  it("refuses tool_call_id on a message that is not a tool message", () => {
    const error = failure({
      model: "m",
      messages: [{ role: "user", content: "hi", tool_call_id: "c1" }],
    });
    expect(error?.code).toBe("invalid_parameter");
    expect(error?.param).toBe("messages[0].tool_call_id");
  });

  it("refuses a tool message whose call was never made", () => {
    const error = failure({
      model: "m",
      messages: [{ role: "tool", tool_call_id: "ghost", content: "x" }],
    });
    expect(error?.param).toBe("messages[0].tool_call_id");
    expect(error?.message).toMatch(/ghost/);
  });

  it("refuses images for a model without vision", () => {
    const body = {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "see" },
            { type: "image_url", image_url: { url: "https://x/y.png" } },
          ],
        },
      ],
    };
    expect(failure(body, true)).toBeUndefined();
    expect(failure(body, false)?.param).toBe("messages[0].content[1]");
  });
});
