/**
 * @module endpoints/chat-completions/convert-chat-request
 * Turns a validated chat completions body into normalized `ChatCallOptions`. Of the fields the
 * gateway does not model, only the forwarded ones (`request-fields.ts`) go into `extraBody`;
 * the operation names the others in a warning.
 */
import { GatewayError } from "../../errors/index.ts";
import type {
  ChatCallOptions,
  ChatContentPart,
  ChatMessage,
  ChatModelRules,
  ChatResponseFormat,
  ChatTool,
} from "../../spec/index.ts";
import { splitExtraFields } from "./request-fields.ts";
import type { ChatCompletionRequest, ChatRequestContent } from "./schema.ts";

type RequestMessage = ChatCompletionRequest["messages"][number];
type RequestContent = ChatRequestContent;

function convertContent(content: RequestContent): string | ChatContentPart[] {
  if (typeof content === "string") return content;
  return content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : {
          type: "image",
          url: part.image_url.url,
          ...(part.image_url.detail ? { detail: part.image_url.detail } : {}),
        },
  );
}

function convertMessage(message: RequestMessage): ChatMessage {
  switch (message.role) {
    case "assistant":
      return {
        role: "assistant",
        content:
          message.content === undefined || message.content === null
            ? null
            : convertContent(message.content),
        ...(message.name ? { name: message.name } : {}),
        ...(message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
        ...(message.tool_calls
          ? {
              toolCalls: message.tool_calls.map((call) => ({
                id: call.id,
                name: call.function.name,
                arguments: call.function.arguments,
              })),
            }
          : {}),
      };
    case "tool":
      return {
        role: "tool",
        content: convertContent(message.content),
        toolCallId: message.tool_call_id,
      };
    default:
      return {
        role: message.role,
        content: convertContent(message.content),
        ...(message.name ? { name: message.name } : {}),
      };
  }
}

/** The spec declares tool items as strings; real clients send objects. Both are accepted. */
function convertTool(
  tool: NonNullable<ChatCompletionRequest["tools"]>[number],
  index: number,
): ChatTool {
  let value: unknown = tool;
  if (typeof tool === "string") {
    try {
      value = JSON.parse(tool);
    } catch {
      throw new GatewayError(
        "invalid_parameter",
        { detail: `Invalid 'tools[${index}]': not valid JSON.` },
        { param: `tools[${index}]` },
      );
    }
  }
  const fn = (
    value as { function?: { name?: unknown; description?: unknown; parameters?: unknown } }
  ).function;
  if (!fn || typeof fn.name !== "string" || fn.name === "") {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid 'tools[${index}]': expected a function with a name.` },
      { param: `tools[${index}]` },
    );
  }
  return {
    name: fn.name,
    ...(typeof fn.description === "string" ? { description: fn.description } : {}),
    ...(fn.parameters && typeof fn.parameters === "object"
      ? { parameters: fn.parameters as Record<string, unknown> }
      : {}),
  };
}

/** The spec's default of `temperature` and `top_p` (2.1). */
export const SPEC_SAMPLING_DEFAULT = 1;

function defaultSampling(
  setting: "temperature" | "top_p",
  rules: ChatModelRules | undefined,
): number | undefined {
  return rules?.fixedSampling?.includes(setting) ? undefined : SPEC_SAMPLING_DEFAULT;
}

/** The normalized form of `response_format`. */
export function toChatResponseFormat(
  format: ChatCompletionRequest["response_format"],
): ChatResponseFormat | undefined {
  if (format === undefined) return undefined;
  if (format.type !== "json_schema") return { type: format.type };
  return {
    type: "json_schema",
    name: format.json_schema.name,
    schema: format.json_schema.schema ?? {},
    ...(format.json_schema.strict !== undefined ? { strict: format.json_schema.strict } : {}),
  };
}

export function convertChatRequest(
  body: ChatCompletionRequest,
  upstreamModel: string,
  modelRules?: ChatModelRules,
): ChatCallOptions {
  const { extraBody } = splitExtraFields(body);
  return {
    upstreamModel,
    messages: body.messages.map(convertMessage),
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens,
    // Spec 2.1: both default to 1, sent so no vendor's own lower default applies; never to a
    // model that takes only its fixed sampling (OpenAI's reasoning models refuse them).
    temperature: body.temperature ?? defaultSampling("temperature", modelRules),
    topP: body.top_p ?? defaultSampling("top_p", modelRules),
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    seed: body.seed,
    user: body.user,
    ...(body.n !== undefined && body.n > 1 ? { choiceCount: body.n } : {}),
    ...(modelRules ? { modelRules } : {}),
    tools: body.tools?.map(convertTool),
    toolChoice:
      body.tool_choice === undefined || typeof body.tool_choice === "string"
        ? body.tool_choice
        : { name: body.tool_choice.function.name },
    responseFormat: toChatResponseFormat(body.response_format),
    ...(Object.keys(extraBody).length ? { extraBody } : {}),
  };
}
