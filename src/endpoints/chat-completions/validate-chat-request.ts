/**
 * @module endpoints/chat-completions/validate-chat-request
 * Rules of a chat request the schema cannot say: no option the gateway cannot bill
 * (`request-fields.ts`), `n` no larger than the model's vendor serves (`max_choices`, 1 when the
 * catalog says nothing), `tool_call_id` belongs to `tool` messages only, a `tool` message answers
 * a call made earlier in the conversation, and image input needs a model that can see.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import { refuseUnbilledOptions } from "./request-fields.ts";
import type { ChatCompletionRequest } from "./schema.ts";

function invalid(param: string, detail: string): never {
  throw new GatewayError(
    "invalid_parameter",
    { detail: `Invalid '${param}': ${detail}` },
    { param },
  );
}

/** Refuses more choices than the model's vendor returns for one request. */
function checkChoices(body: ChatCompletionRequest, model: CatalogModel): void {
  const most = model.capabilities?.max_choices ?? 1;
  if (body.n === undefined || body.n <= most) return;
  const detail =
    most === 1
      ? `is refused above 1: the vendor of '${model.id}' returns one choice per request.`
      : `is refused above ${most}: the vendor of '${model.id}' returns at most ${most} choices per request.`;
  throw new GatewayError("unsupported_parameter", { param: "n", detail }, { param: "n" });
}

export function validateChatRequest(body: ChatCompletionRequest, model: CatalogModel): void {
  refuseUnbilledOptions(body);
  checkChoices(body, model);
  const calls = new Set<string>();
  body.messages.forEach((message, index) => {
    if (message.role !== "tool" && "tool_call_id" in message) {
      invalid(
        `messages[${index}].tool_call_id`,
        "only messages with role 'tool' carry a tool_call_id.",
      );
    }
    if (message.role === "assistant")
      for (const call of message.tool_calls ?? []) calls.add(call.id);
    if (message.role === "tool" && !calls.has(message.tool_call_id)) {
      invalid(
        `messages[${index}].tool_call_id`,
        `no earlier assistant message made a tool call with id '${message.tool_call_id}'.`,
      );
    }
    const content = "content" in message ? message.content : undefined;
    if (Array.isArray(content) && model.capabilities?.vision === false) {
      const image = content.findIndex((part) => part.type === "image_url");
      if (image !== -1)
        invalid(
          `messages[${index}].content[${image}]`,
          `the model '${model.id}' does not accept images.`,
        );
    }
  });
}
