/**
 * @module endpoints/responses/build-responses-response
 * Builds the Responses API's Response object (pure): the request's settings echoed with their
 * defaults, the output items of a chat result (`reasoning` when the vendor gave reasoning text,
 * as a summary; one `message` with an `output_text` part; one `function_call` per tool call,
 * keeping the vendor's call id as `call_id`), the status (`incomplete` with its reason for a cut
 * answer, never `completed`) and the usage in the Responses names. `output_text` is not sent:
 * the SDKs compute it. The stream (`responses-stream-events.ts`) builds the same items.
 */
import type { ChatChoice, ChatFinishReason, TokenUsage } from "../../spec/index.ts";
import { randomBase62 } from "../../store/index.ts";
import type { ResponsesRequest } from "./schema.ts";

export type OutputItem = Record<string, unknown> & { id: string; type: string };

/** A fresh id with a Responses prefix (`resp`, `msg`, `fc`, `rs`). */
export function responsesId(prefix: "resp" | "msg" | "fc" | "fco" | "rs" | "ref"): string {
  return `${prefix}_${randomBase62(32)}`;
}

export function toResponsesUsage(usage: TokenUsage) {
  return {
    input_tokens: usage.input.total,
    input_tokens_details: {
      cached_tokens: usage.input.cacheRead,
      cache_write_tokens: usage.input.cacheWrite,
    },
    output_tokens: usage.output.total,
    output_tokens_details: { reasoning_tokens: usage.output.reasoning },
    total_tokens: usage.input.total + usage.output.total,
  };
}

/** The status a finish reason ends in: a cut answer is `incomplete`, with the reason. */
export function responseStatus(reason: ChatFinishReason): {
  status: "completed" | "incomplete";
  incomplete_details: { reason: "max_output_tokens" | "content_filter" } | null;
} {
  if (reason === "length")
    return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (reason === "content_filter")
    return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/** The function tools as the Response echoes them (strict unless the request said otherwise). */
function echoedTools(body: ResponsesRequest) {
  return (body.tools ?? []).map((tool) =>
    tool.type === "function"
      ? {
          type: "function",
          name: tool.name,
          description: tool.description ?? null,
          parameters: tool.parameters ?? null,
          strict: tool.strict ?? true,
        }
      : tool,
  );
}

export interface ResponseHead {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
}

/** The Response with the request's settings echoed; `status`, `output` and `usage` to fill. */
export function responseSkeleton(body: ResponsesRequest, head: ResponseHead) {
  return {
    id: head.id,
    object: "response" as const,
    created_at: head.createdAt,
    status: "in_progress" as string,
    completed_at: null as number | null,
    error: null as { code: string; message: string } | null,
    incomplete_details: null as { reason: string } | null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: head.model,
    output: [] as OutputItem[],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: body.service_tier ?? "auto",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: {
      format: body.text?.format ?? { type: "text" },
      ...(body.text?.verbosity ? { verbosity: body.text.verbosity } : {}),
    },
    tool_choice: body.tool_choice ?? "auto",
    tools: echoedTools(body),
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    user: body.user ?? null,
    metadata: body.metadata ?? {},
    usage: null as ReturnType<typeof toResponsesUsage> | null,
  };
}

export type ResponseObject = ReturnType<typeof responseSkeleton>;

export function reasoningItem(id: string, text: string): OutputItem {
  return { id, type: "reasoning", summary: [{ type: "summary_text", text }] };
}

export function outputTextPart(text: string) {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function messageItem(id: string, text: string, status: string): OutputItem {
  return {
    id,
    type: "message",
    status,
    role: "assistant",
    content: text === "" && status === "in_progress" ? [] : [outputTextPart(text)],
  };
}

export function functionCallItem(
  id: string,
  call: { id: string; name: string; arguments: string },
  status: string,
): OutputItem {
  return {
    id,
    type: "function_call",
    status,
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
  };
}

/** The output items of a complete chat answer. */
export function outputItems(choice: ChatChoice): OutputItem[] {
  const { status } = responseStatus(choice.finishReason);
  const items: OutputItem[] = [];
  if (choice.reasoning) items.push(reasoningItem(responsesId("rs"), choice.reasoning));
  if (choice.text) items.push(messageItem(responsesId("msg"), choice.text, status));
  for (const call of choice.toolCalls) {
    items.push(functionCallItem(responsesId("fc"), call, "completed"));
  }
  return items;
}

/** The finished Response of a complete answer (or of a stream, from its collected items). */
export function finishedResponse(
  skeleton: ResponseObject,
  input: { output: OutputItem[]; finishReason: ChatFinishReason; usage: TokenUsage; now: number },
): ResponseObject {
  const { status, incomplete_details } = responseStatus(input.finishReason);
  return {
    ...skeleton,
    status,
    completed_at: status === "completed" ? Math.floor(input.now / 1000) : null,
    incomplete_details,
    output: input.output,
    usage: toResponsesUsage(input.usage),
  };
}

export function buildResponsesResponse(input: {
  body: ResponsesRequest;
  head: ResponseHead;
  result: ChatChoice;
  usage: TokenUsage;
  now: number;
}): ResponseObject {
  return finishedResponse(responseSkeleton(input.body, input.head), {
    output: outputItems(input.result),
    finishReason: input.result.finishReason,
    usage: input.usage,
    now: input.now,
  });
}
