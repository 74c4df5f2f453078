/**
 * @module providers/openai-compatible/convert-to-openai-request
 * Builds the OpenAI chat completions request body from normalized call options. Of the fields
 * the normalized options do not model (`extraBody`), only those this protocol knows are passed
 * on (`CHAT_EXTRA_FIELDS` of src/spec); any other is dropped with an unsupported warning, so nothing
 * reaches the vendor that the gateway did not decide to send.
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
import {
  type CallWarning,
  CHAT_EXTRA_FIELDS,
  type ChatCallOptions,
  type ChatContentPart,
  type ChatMessage,
} from "../../spec/index.ts";

export interface OpenAIRequest {
  body: Record<string, unknown>;
  warnings: CallWarning[];
}

type OpenAIContent =
  | string
  | Array<
      | { type: "text"; text: string }
      | { type: "image_url"; image_url: { url: string; detail?: string } }
    >;

function convertContent(content: string | ChatContentPart[]): OpenAIContent {
  if (typeof content === "string") return content;
  return content.map((part) =>
    part.type === "text"
      ? { type: "text" as const, text: part.text }
      : {
          type: "image_url" as const,
          image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) },
        },
  );
}

export function convertToOpenAIMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case "tool":
      return {
        role: "tool",
        tool_call_id: message.toolCallId,
        content: convertContent(message.content),
      };
    case "assistant":
      return {
        role: "assistant",
        content: message.content === null ? null : convertContent(message.content),
        ...(message.name ? { name: message.name } : {}),
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    default:
      return {
        role: message.role,
        content: convertContent(message.content),
        ...(message.name ? { name: message.name } : {}),
      };
  }
}

export function convertToOpenAIRequest(options: ChatCallOptions, stream: boolean): OpenAIRequest {
  const warnings: CallWarning[] = [];
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options.extraBody ?? {})) {
    if (CHAT_EXTRA_FIELDS.has(key)) body[key] = value;
    else warnings.push({ type: "unsupported", setting: key });
  }
  body.model = options.upstreamModel;
  body.messages = options.messages.map(convertToOpenAIMessage);
  const set = (key: string, value: unknown) => {
    if (value !== undefined) body[key] = value;
  };
  set("max_tokens", options.maxOutputTokens);
  set("temperature", options.temperature);
  set("top_p", options.topP);
  set("stop", options.stop);
  set("presence_penalty", options.presencePenalty);
  set("frequency_penalty", options.frequencyPenalty);
  set("seed", options.seed);
  set("user", options.user);
  if (options.tools?.length) {
    body.tools = options.tools.map((tool) => ({
      type: "function",
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        ...(tool.parameters ? { parameters: tool.parameters } : {}),
      },
    }));
  }
  if (options.toolChoice !== undefined) {
    body.tool_choice =
      typeof options.toolChoice === "string"
        ? options.toolChoice
        : { type: "function", function: { name: options.toolChoice.name } };
  }
  if (options.responseFormat) {
    const format = options.responseFormat;
    body.response_format =
      format.type === "json_schema"
        ? {
            type: "json_schema",
            json_schema: { name: format.name, schema: format.schema, strict: format.strict },
          }
        : { type: format.type };
  }
  if (stream) {
    body.stream = true;
    // Always ask for usage so every stream can be metered; the endpoint hides it if unasked.
    body.stream_options = { include_usage: true };
  }
  return { body, warnings };
}
