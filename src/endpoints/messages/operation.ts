/**
 * @module endpoints/messages/operation
 * The transport-free `/v1/messages` operation. A model's routes are tried in order; an
 * Anthropic-protocol route is served natively (the body and the events pass through, usage read
 * on the way), any other route is translated to and from the normalized chat model.
 */

import { completedUsage } from "../../billing/index.ts";
import { adapterFor } from "../../core/adapter-for.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { GatewayError } from "../../errors/index.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import type {
  CallWarning,
  ChatCallOptions,
  ChatResult,
  ChatStreamPart,
  PassthroughEvent,
  PassthroughResult,
  PassthroughStream,
  PassthroughTextEvent,
  TokenUsage,
} from "../../spec/index.ts";
import { newId } from "../../store/index.ts";
import { chatModelRules } from "../chat-model-rules.ts";
import { buildMessagesResponse } from "./build-messages-response.ts";
import { convertMessagesRequest } from "./convert-messages-request.ts";
import { countMessagesTokens } from "./estimate-messages-cost.ts";
import { nativeStream, translatedStream } from "./message-streams.ts";
import { countOutputTokens } from "./passthrough-frames.ts";
import { nativeMessagesBody } from "./request-fields.ts";
import type { MessagesRequest } from "./schema.ts";

const MIN_THINKING_BUDGET = 1_024;

/** Headers a Messages client sends that an Anthropic upstream must receive unchanged. */
const FORWARDED_HEADERS = ["anthropic-version", "anthropic-beta"];

export function forwardedHeaders(headers: OperationContext["headers"]): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (typeof value === "string") forwarded[name] = value;
  }
  return forwarded;
}

/**
 * Claude Code puts `role: "system"` entries in the middle of `messages`; the Messages API takes
 * system text only at the top. Each becomes a user turn carrying the text as a system note, in
 * place, so nothing is lost or reordered (consecutive user turns are merged by the API).
 */
export function withoutSystemRole(
  messages: MessagesRequest["messages"],
): MessagesRequest["messages"] {
  if (!messages.some((message) => message.role === "system")) return messages;
  return messages.map((message) => {
    if (message.role !== "system") return message;
    const text =
      typeof message.content === "string"
        ? message.content
        : message.content.map((block) => ("text" in block ? String(block.text) : "")).join("\n");
    return {
      role: "user",
      content: [{ type: "text", text: `<system-reminder>\n${text}\n</system-reminder>` }],
    };
  });
}

type Attempt =
  | { kind: "native-json"; result: PassthroughResult; warnings: CallWarning[] }
  | {
      kind: "native-stream";
      stream: PassthroughStream<Array<PassthroughEvent | PassthroughTextEvent>>;
      warnings: CallWarning[];
    }
  | {
      kind: "translated-json";
      result: ChatResult;
      options: ChatCallOptions;
      warnings: CallWarning[];
    }
  | {
      kind: "translated-stream";
      parts: AsyncIterable<ChatStreamPart>;
      options: ChatCallOptions;
      warnings: CallWarning[];
    };

async function estimatedUsage(body: MessagesRequest, outputTokens: number): Promise<TokenUsage> {
  return {
    input: { total: await countMessagesTokens(body, { exact: true }), cacheRead: 0, cacheWrite: 0 },
    output: { total: outputTokens, reasoning: 0 },
    source: "estimated",
  };
}

export async function runMessages(
  body: MessagesRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const { providers } = context.services;
  const headers = forwardedHeaders(context.headers);
  const stream = body.stream === true;
  // Coding assistants size `max_tokens` for the model they think they talk to (Claude Code: up
  // to 128k); upstreams reject more than the model allows, so it is capped at the catalog's
  // output limit on every route.
  const cap = context.model.capabilities?.max_output_tokens;
  const capped = cap !== undefined && body.max_tokens > cap ? cap : undefined;
  const capWarning: CallWarning = {
    type: "compatibility",
    setting: "max_tokens",
    details: `capped at ${cap}, the model's limit`,
  };
  const attempt = await attemptRoutes<Attempt>(
    context.model,
    async (route) => {
      const native = providers.messagesPassthrough(route);
      if (native) {
        const known = nativeMessagesBody(body);
        const call = {
          body: {
            ...known.body,
            model: route.upstreamModel,
            messages: withoutSystemRole(body.messages),
            ...(capped === undefined ? {} : withMaxTokens(body, capped)),
          },
          headers,
          abortSignal: context.signal,
        };
        const warnings = capped === undefined ? known.warnings : [...known.warnings, capWarning];
        return stream
          ? { kind: "native-stream", stream: await native.stream(call), warnings }
          : { kind: "native-json", result: await native.create(call), warnings };
      }
      const chatModel = adapterFor(providers, "chatModel", route, context.model);
      refuseStopsBeyondOpenAI(body, route.adapter, context.model.id);
      const { options, warnings } = convertMessagesRequest(body, route.upstreamModel);
      const rules = chatModelRules(context.model);
      if (rules) options.modelRules = rules;
      if (context.model.capabilities?.reasoning === false) dropReasoning(options, warnings);
      if (capped !== undefined) {
        warnings.push(capWarning);
        options.maxOutputTokens = capped;
      }
      const call = { ...options, abortSignal: context.signal };
      return stream
        ? { kind: "translated-stream", parts: await chatModel.doStream(call), options, warnings }
        : { kind: "translated-json", result: await chatModel.doGenerate(call), options, warnings };
    },
    logAttempts(context),
    context.services.routeHealth,
  );

  switch (attempt.kind) {
    case "native-json": {
      const usage = await completedUsage(attempt.result.usage, () =>
        estimatedUsage(body, countOutputTokens(attempt.result.body)),
      );
      return {
        kind: "json",
        body: { ...attempt.result.body, model: body.model },
        usage: { tokens: usage },
        settleDetails: { upstreamRequestId: attempt.result.upstreamRequestId },
        warnings: attempt.warnings,
      };
    }
    case "translated-json": {
      const { result } = attempt;
      const usage = await completedUsage(result.usage, () =>
        estimatedUsage(
          body,
          Math.ceil(((result.text ?? "").length + (result.reasoning ?? "").length) / 4),
        ),
      );
      const message = buildMessagesResponse({
        id: `msg_${newId("").slice(1)}`,
        model: body.model,
        result,
        usage,
        stopSequences: body.stop_sequences,
      });
      return {
        kind: "json",
        body: message,
        usage: { tokens: usage },
        settleDetails: { upstreamRequestId: result.upstreamRequestId },
        warnings: [...attempt.warnings, ...result.warnings],
      };
    }
    case "native-stream":
      return nativeStream(body, context, attempt.stream, attempt.warnings);
    case "translated-stream":
      return translatedStream(body, context, attempt.parts, attempt.warnings);
  }
}

/** The OpenAI chat protocol's limit on stop sequences (its vendors refuse more with a 400). */
const OPENAI_MAX_STOPS = 4;

/**
 * Anthropic takes any number of `stop_sequences`; an OpenAI-compatible route takes 4. Dropping
 * the rest would let the answer run past a sequence the client asked to stop at, so the request
 * is refused instead.
 */
function refuseStopsBeyondOpenAI(body: MessagesRequest, adapter: string, modelId: string): void {
  const count = body.stop_sequences?.length ?? 0;
  if (adapter !== "openai-compatible" || count <= OPENAI_MAX_STOPS) return;
  throw new GatewayError(
    "invalid_parameter",
    {
      detail: `Invalid 'stop_sequences': ${count} given; '${modelId}' is served through the OpenAI chat protocol, which takes at most ${OPENAI_MAX_STOPS}.`,
    },
    { param: "stop_sequences" },
  );
}

/**
 * Claude Code asks for thinking on every request, and vendors refuse `reasoning_effort` for a
 * model that does not reason (OpenAI: 400 `unsupported_parameter`), so it is not sent to one.
 */
function dropReasoning(options: ChatCallOptions, warnings: CallWarning[]): void {
  if (options.extraBody?.reasoning_effort === undefined) return;
  const { reasoning_effort: _dropped, ...rest } = options.extraBody;
  if (Object.keys(rest).length) options.extraBody = rest;
  else delete options.extraBody;
  const index = warnings.findIndex(
    (warning) => "setting" in warning && warning.setting === "thinking",
  );
  const warning: CallWarning = {
    type: "unsupported",
    setting: "thinking",
    details: "dropped: the model does not reason",
  };
  if (index === -1) warnings.push(warning);
  else warnings[index] = warning;
}

/**
 * `max_tokens` lowered to `cap`, and a thinking budget kept below it (Anthropic requires
 * `budget_tokens < max_tokens`).
 */
export function withMaxTokens(body: MessagesRequest, cap: number): Partial<MessagesRequest> {
  const budget = body.thinking?.budget_tokens;
  if (!body.thinking || budget === undefined || budget < cap) return { max_tokens: cap };
  // Anthropic's smallest thinking budget is 1,024 tokens: below that, no thinking at all.
  return cap > MIN_THINKING_BUDGET
    ? { max_tokens: cap, thinking: { ...body.thinking, budget_tokens: cap - 1 } }
    : { max_tokens: cap, thinking: undefined };
}
