/**
 * @module endpoints/responses/convert-responses-request
 * Turns a validated Responses body (with the items of the conversation it continues, if any)
 * into the chat completions request it is equivalent to, then into normalized
 * `ChatCallOptions` through the chat endpoint's own converter. Going through the chat request
 * keeps one set of rules for both endpoints: the same hold (`estimateChatCost`), the same
 * output cap, the same sampling defaults and forwarded fields, so a request costs the same on
 * either path.
 * - `instructions` → a leading system message (not inherited through `previous_response_id`);
 * - message items → messages (`input_text` → text, `input_image` → image URL; assistant
 *   `output_text`/`refusal` parts → assistant text);
 * - `function_call` items → `tool_calls` of one assistant message per turn (merged with the
 *   assistant message right before them), `function_call_output` → `tool` messages;
 * - `reasoning` items → the next assistant message's reasoning;
 * - flat function tools → chat tools; `tool_choice` (`allowed_tools` narrows the tools);
 * - `max_output_tokens` → `max_completion_tokens`, `text.format` → `response_format`,
 *   `text.verbosity` → `verbosity`, `reasoning.effort` → `reasoning_effort`.
 * Gateway-side fields (`store`, `previous_response_id`, `metadata`, `truncation`, `include`)
 * are not sent upstream; any other unknown field is dropped with a warning.
 */
import { droppedFieldWarnings } from "../../core/dropped-fields.ts";
import { GatewayError } from "../../errors/index.ts";
import type {
  CallWarning,
  ChatCallOptions,
  ChatModelRules,
  ChatResponseFormat,
} from "../../spec/index.ts";
import {
  convertChatRequest,
  toChatResponseFormat,
} from "../chat-completions/convert-chat-request.ts";
import type { ChatCompletionRequest, ChatRequestContent } from "../chat-completions/schema.ts";
import type {
  ResponsesContentPart,
  ResponsesFunctionTool,
  ResponsesInputItem,
  ResponsesRequest,
} from "./schema.ts";

type ChatMessage = ChatCompletionRequest["messages"][number];
type ChatPart = Exclude<ChatRequestContent, string>[number];
type ChatTool = Extract<NonNullable<ChatCompletionRequest["tools"]>[number], { function: unknown }>;

/** Fields this module converts or the endpoint keeps for itself. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "temperature",
  "top_p",
  "text",
  "reasoning",
  "metadata",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "store",
  "previous_response_id",
  "stream",
  "truncation",
  "service_tier",
  "include",
  "stream_options",
]);

function invalid(param: string, detail: string): never {
  throw new GatewayError(
    "invalid_parameter",
    { detail: `Invalid '${param}': ${detail}` },
    { param },
  );
}

function chatPart(part: ResponsesContentPart, param: string): ChatPart {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: part.text };
    case "refusal":
      return { type: "text", text: part.refusal };
    case "input_image":
      if (!part.image_url) {
        invalid(
          `${param}.image_url`,
          "images are taken as an https or data: URL in 'image_url'; file ids are not served.",
        );
      }
      return {
        type: "image_url",
        image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) },
      };
  }
}

function chatContent(content: string | ResponsesContentPart[], param: string): string | ChatPart[] {
  if (typeof content === "string") return content;
  return content.map((part, index) => chatPart(part, `${param}[${index}]`));
}

function assistantText(content: string | ResponsesContentPart[]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) => ("text" in part ? part.text : "refusal" in part ? part.refusal : ""))
    .join("");
}

/** The chat messages of a list of input items; `param` names the list in errors. */
export function inputMessages(items: readonly ResponsesInputItem[], param: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let reasoning: string[] = [];
  /** The assistant message function calls of this turn join (the one right before them). */
  let turn: Extract<ChatMessage, { role: "assistant" }> | undefined;
  const takeReasoning = () => {
    const text = reasoning.join("\n\n");
    reasoning = [];
    return text ? { reasoning_content: text } : {};
  };
  items.forEach((item, index) => {
    const at = `${param}[${index}]`;
    switch (item.type) {
      case undefined:
      case "message":
        if (item.role === "assistant") {
          turn = { role: "assistant", content: assistantText(item.content), ...takeReasoning() };
          messages.push(turn);
        } else {
          turn = undefined;
          messages.push({ role: item.role, content: chatContent(item.content, `${at}.content`) });
        }
        return;
      case "function_call": {
        const call = {
          id: item.call_id,
          type: "function" as const,
          function: { name: item.name, arguments: item.arguments },
        };
        if (turn) {
          turn.tool_calls = [...(turn.tool_calls ?? []), call];
          if (turn.content === "") turn.content = null;
        } else {
          turn = { role: "assistant", content: null, tool_calls: [call], ...takeReasoning() };
          messages.push(turn);
        }
        return;
      }
      case "function_call_output":
        turn = undefined;
        messages.push({
          role: "tool",
          tool_call_id: item.call_id,
          content:
            typeof item.output === "string"
              ? item.output
              : item.output.map((part, j) => chatPart(part, `${at}.output[${j}]`)),
        });
        return;
      case "reasoning":
        reasoning.push(
          [...item.summary, ...(item.content ?? [])]
            .map((part) => part.text)
            .filter(Boolean)
            .join("\n\n"),
        );
        return;
      case "item_reference":
        throw new GatewayError(
          "unsupported_parameter",
          {
            param: at,
            detail:
              "is an item reference, which this gateway does not resolve: send the item itself, or continue the conversation with 'previous_response_id'.",
          },
          { param: at },
        );
    }
  });
  return messages;
}

/** The input as items: a string is one user message. */
export function inputItems(body: Pick<ResponsesRequest, "input">): ResponsesInputItem[] {
  if (body.input === undefined) return [];
  return typeof body.input === "string"
    ? [{ type: "message", role: "user", content: body.input }]
    : body.input;
}

function chatTool(tool: ResponsesFunctionTool): ChatTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters ? { parameters: tool.parameters } : {}),
      ...(typeof tool.strict === "boolean" ? { strict: tool.strict } : {}),
    },
  };
}

function functionTools(body: ResponsesRequest): ResponsesFunctionTool[] {
  return (body.tools ?? []).filter(
    (tool): tool is ResponsesFunctionTool => tool.type === "function",
  );
}

function toolSettings(
  body: ResponsesRequest,
): Pick<ChatCompletionRequest, "tools" | "tool_choice"> {
  let tools = functionTools(body);
  const choice = body.tool_choice;
  let toolChoice: ChatCompletionRequest["tool_choice"];
  if (typeof choice === "string") toolChoice = choice;
  else if (choice?.type === "function")
    toolChoice = { type: "function", function: { name: choice.name } };
  else if (choice?.type === "allowed_tools") {
    const allowed = new Set(choice.tools.map((tool) => tool.name));
    tools = tools.filter((tool) => allowed.has(tool.name));
    toolChoice = choice.mode;
  }
  if (!tools.length) return {};
  return {
    tools: tools.map(chatTool),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
  };
}

function responseFormat(body: ResponsesRequest): ChatCompletionRequest["response_format"] {
  const format = body.text?.format;
  if (!format || format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  return {
    type: "json_schema",
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}),
    },
  };
}

/** The normalized form of `text.format`. */
export function responsesTextFormat(body: ResponsesRequest): ChatResponseFormat | undefined {
  return toChatResponseFormat(responseFormat(body));
}

/**
 * The chat completions request equivalent to a Responses request whose conversation starts
 * with `prior` (the stored items of `previous_response_id`), and the warnings for what was
 * dropped.
 */
export function toChatCompletionRequest(
  body: ResponsesRequest,
  prior: readonly ResponsesInputItem[] = [],
): { chat: ChatCompletionRequest; warnings: CallWarning[] } {
  const messages: ChatMessage[] = [
    ...(body.instructions ? [{ role: "system" as const, content: body.instructions }] : []),
    ...inputMessages(prior, "previous_response_id"),
    ...inputMessages(inputItems(body), "input"),
  ];
  const format = responseFormat(body);
  const chat: ChatCompletionRequest = {
    model: body.model,
    messages,
    ...(body.max_output_tokens !== undefined
      ? { max_completion_tokens: body.max_output_tokens }
      : {}),
    ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
    ...(body.top_p !== undefined ? { top_p: body.top_p } : {}),
    ...(body.stream ? { stream: true } : {}),
    ...toolSettings(body),
    ...(format ? { response_format: format } : {}),
    ...(body.user !== undefined ? { user: body.user } : {}),
    ...(body.parallel_tool_calls !== undefined
      ? { parallel_tool_calls: body.parallel_tool_calls }
      : {}),
    ...(body.reasoning?.effort !== undefined ? { reasoning_effort: body.reasoning.effort } : {}),
    ...(body.text?.verbosity !== undefined ? { verbosity: body.text.verbosity } : {}),
    ...(body.prompt_cache_key !== undefined ? { prompt_cache_key: body.prompt_cache_key } : {}),
    ...(body.safety_identifier !== undefined ? { safety_identifier: body.safety_identifier } : {}),
    ...(body.service_tier !== undefined ? { service_tier: body.service_tier } : {}),
  };
  const dropped = Object.keys(body).filter((key) => !KNOWN_FIELDS.has(key));
  return { chat, warnings: droppedFieldWarnings(dropped) };
}

/** The normalized chat call of a Responses request, for one route's upstream model. */
export function convertResponsesRequest(
  body: ResponsesRequest,
  upstreamModel: string,
  options: { prior?: readonly ResponsesInputItem[]; rules?: ChatModelRules } = {},
): { options: ChatCallOptions; warnings: CallWarning[] } {
  const { chat, warnings } = toChatCompletionRequest(body, options.prior);
  return { options: convertChatRequest(chat, upstreamModel, options.rules), warnings };
}
