/**
 * @module sandbox/openai-responses
 * OpenAI's `POST /v1/responses`, under the `openai` prefix only (no other vendor has it):
 * bearer auth, OpenAI's request rules (`openai-responses-request.ts`), the usual faults
 * (`status`, `delay`, `hang`, `words`, `reasoning`, `cached`, `no-usage`, `drop`), then a
 * Response object or its event stream — `response.created`, `response.in_progress`, the item's
 * `.added` / deltas / `.done` events, `response.completed` (or `response.incomplete` when
 * `max_output_tokens` cut the text), `sequence_number` from 0, no `[DONE]`. The words are the
 * chat planner's, so a request answers the same on both protocols. Nothing is stored: the
 * gateway keeps its own conversations and sends `store: false`.
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type ChatPlan, planChatReply, requestSeed } from "./chat-reply.ts";
import { closeSignal, sleep, untilClosed, writeFlushed } from "./connection.ts";
import { countTokens, pickWords } from "./deterministic-text.ts";
import { parseFaultSpec, selectFaultSource } from "./faults.ts";
import { FAULT_HEADER } from "./openai-chat.ts";
import {
  INVALID_API_KEY,
  openAIError,
  openAIErrorForStatus,
  sendOpenAIError,
} from "./openai-errors.ts";
import { parseResponsesRequest } from "./openai-responses-request.ts";
import type { SandboxState } from "./state.ts";

/** The Responses path of the OpenAI emulation. */
export function isResponsesPath(path: string): boolean {
  return path === "/openai/v1/responses";
}

type Json = Record<string, unknown>;

function hex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

function outputText(text: string) {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

/** The Response (final or, with `status: in_progress`, the opening snapshot) of a plan. */
function responseBody(
  body: Json,
  plan: ChatPlan,
  ids: { response: string; item: string; reasoning: string },
  options: { final: boolean; usage: boolean },
): Json {
  const cut = plan.reply.finishReason === "length";
  const status = options.final ? (cut ? "incomplete" : "completed") : "in_progress";
  const output: Json[] = [];
  if (options.final) {
    if (plan.reasoning)
      output.push({
        id: ids.reasoning,
        type: "reasoning",
        summary: [{ type: "summary_text", text: plan.reasoning }],
      });
    output.push(
      plan.reply.kind === "tool_call"
        ? {
            id: ids.item,
            type: "function_call",
            status: "completed",
            call_id: plan.reply.call.id,
            name: plan.reply.call.name,
            arguments: plan.reply.call.arguments,
          }
        : {
            id: ids.item,
            type: "message",
            status: cut ? "incomplete" : "completed",
            role: "assistant",
            content: [outputText(plan.reply.content)],
          },
    );
  }
  const cached = Math.min(plan.cachedTokens ?? 0, plan.promptTokens);
  const reasoningTokens = plan.reasoning ? countTokens(plan.reasoning) : 0;
  return {
    id: ids.response,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    completed_at: status === "completed" ? Math.floor(Date.now() / 1000) : null,
    error: null,
    incomplete_details: options.final && cut ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    user: null,
    metadata: body.metadata ?? {},
    usage:
      options.final && options.usage
        ? {
            input_tokens: plan.promptTokens,
            input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
            output_tokens: plan.completionTokens,
            output_tokens_details: { reasoning_tokens: reasoningTokens },
            total_tokens: plan.promptTokens + plan.completionTokens,
          }
        : null,
  };
}

/** Splits text into the fragments a stream sends (a word and its following space). */
function fragments(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** The event sequence of a plan, each event `{type, sequence_number, …}`. */
export function responseEvents(
  body: Json,
  plan: ChatPlan,
  ids: { response: string; item: string; reasoning: string },
  usage = true,
): Json[] {
  const events: Json[] = [];
  const push = (type: string, data: Json) =>
    events.push({ type, sequence_number: events.length, ...data });
  const opening = responseBody(body, plan, ids, { final: false, usage });
  const final = responseBody(body, plan, ids, { final: true, usage });
  const finalItems = final.output as Json[];
  push("response.created", { response: opening });
  push("response.in_progress", { response: opening });
  let index = 0;
  if (plan.reasoning) {
    const at = { item_id: ids.reasoning, output_index: index };
    push("response.output_item.added", {
      output_index: index,
      item: { id: ids.reasoning, type: "reasoning", summary: [] },
    });
    push("response.reasoning_summary_part.added", {
      ...at,
      summary_index: 0,
      part: { type: "summary_text", text: "" },
    });
    for (const delta of fragments(plan.reasoning))
      push("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta });
    push("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: plan.reasoning });
    push("response.reasoning_summary_part.done", {
      ...at,
      summary_index: 0,
      part: { type: "summary_text", text: plan.reasoning },
    });
    push("response.output_item.done", { output_index: index, item: finalItems[index] });
    index += 1;
  }
  const at = { item_id: ids.item, output_index: index };
  const item = finalItems[index]!;
  if (plan.reply.kind === "tool_call") {
    push("response.output_item.added", {
      output_index: index,
      item: { ...item, status: "in_progress", arguments: "" },
    });
    for (const delta of fragments(plan.reply.call.arguments))
      push("response.function_call_arguments.delta", { ...at, delta });
    push("response.function_call_arguments.done", { ...at, arguments: plan.reply.call.arguments });
  } else {
    const text = plan.reply.content;
    push("response.output_item.added", {
      output_index: index,
      item: { ...item, status: "in_progress", content: [] },
    });
    push("response.content_part.added", { ...at, content_index: 0, part: outputText("") });
    for (const delta of fragments(text))
      push("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] });
    push("response.output_text.done", { ...at, content_index: 0, text, logprobs: [] });
    push("response.content_part.done", { ...at, content_index: 0, part: outputText(text) });
  }
  push("response.output_item.done", { output_index: index, item });
  push(final.status === "incomplete" ? "response.incomplete" : "response.completed", {
    response: final,
  });
  return events;
}

export async function handleResponses(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const headers = { "x-request-id": `req_${hex(16)}` };
  const authorization = request.headers.authorization;
  if (!authorization || !/^Bearer\s+\S+/i.test(authorization.trim())) {
    return sendOpenAIError(reply, 401, INVALID_API_KEY, headers);
  }
  const parsed = parseResponsesRequest(request.body);
  if (!parsed.ok) {
    const { status, message, param, code } = parsed.error;
    const body = openAIError(message, "invalid_request_error", param, code);
    return sendOpenAIError(reply, status, body, headers);
  }
  const chat = parsed.request;
  const header = request.headers[FAULT_HEADER];
  const source = selectFaultSource(
    Array.isArray(header) ? header.join(";") : header,
    chat.messages.map((message) => message.text),
  );
  const faultResult = parseFaultSpec(source?.spec ?? "");
  if (!faultResult.ok) {
    const message = `Invalid sandbox fault spec '${source?.spec}': ${faultResult.message}.`;
    const body = openAIError(message, "invalid_request_error", null, "invalid_sandbox_fault");
    return sendOpenAIError(reply, 400, body, headers);
  }
  const fault = faultResult.fault;
  const signal = closeSignal(reply.raw);
  if (fault.hang) {
    reply.hijack();
    await untilClosed(signal);
    return undefined;
  }
  if (!(await sleep(fault.delayMs ?? 0, signal))) {
    reply.hijack();
    return undefined;
  }
  if (fault.status !== undefined) {
    return sendOpenAIError(reply, fault.status, openAIErrorForStatus(fault.status), headers);
  }
  const planned = planChatReply(chat, { words: fault.words, offSchema: fault.offSchema });
  const reasoning = fault.reasoningWords
    ? `Thinking it over: ${pickWords(requestSeed(chat) ^ 0x5eed, fault.reasoningWords - 3).join(" ")}`
    : undefined;
  const plan: ChatPlan = {
    ...planned,
    ...(reasoning
      ? { reasoning, completionTokens: planned.completionTokens + countTokens(reasoning) }
      : {}),
    cachedTokens: fault.cachedTokens,
  };
  const stem = hex(24);
  const ids = {
    response: `resp_${stem}`,
    item: `${plan.reply.kind === "tool_call" ? "fc" : "msg"}_${stem}`,
    reasoning: `rs_${stem}`,
  };
  if (!chat.stream) {
    if (fault.dropAfter !== undefined) {
      reply.hijack();
      state.markDropped(reply.raw);
      reply.raw.socket?.destroy();
      return undefined;
    }
    return reply
      .code(200)
      .headers(headers)
      .send(responseBody(parsed.body, plan, ids, { final: true, usage: !fault.noUsage }));
  }
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  response.flushHeaders();
  const events = responseEvents(parsed.body, plan, ids, !fault.noUsage);
  for (const [index, event] of events.entries()) {
    if (index > 0 && !(await sleep(fault.chunkDelayMs ?? 0, signal))) return undefined;
    if (index === fault.dropAfter) {
      state.markDropped(response);
      response.socket?.destroy();
      return undefined;
    }
    const frame = `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
    if (!(await writeFlushed(response, frame))) return undefined;
  }
  response.end();
  return undefined;
}
