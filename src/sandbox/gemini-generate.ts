/**
 * @module sandbox/gemini-generate
 * The Gemini API emulation under `/gemini/v1beta`: `models/{model}:generateContent`,
 * `:streamGenerateContent` (SSE with `?alt=sse`, else a streamed JSON array) and `:countTokens`.
 * Auth is `x-goog-api-key` or `?key=`; errors use Google's envelope. Replies come from the shared
 * planner, so a conversation gets the same text as over the OpenAI protocol, and the fault
 * language (`x-sandbox-fault` header or `[[sandbox:...]]` directive) works as it does there.
 * @see https://ai.google.dev/api/generate-content
 */
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { countPromptTokens, planChatReply, requestSeed } from "./chat-reply.ts";
import type { ChatRequest } from "./chat-request.ts";
import { closeSignal } from "./connection.ts";
import { promptOverWindow } from "./context-window.ts";
import { countTokens, pickWords, stableHash } from "./deterministic-text.ts";
import type { FaultSpec } from "./faults.ts";
import { type EmbedMethod, handleGeminiEmbed } from "./gemini-embed.ts";
import {
  GOOGLE_INVALID_KEY,
  googleError,
  googleErrorForStatus,
  googleStatusName,
  invalidArgument,
  sendGoogleError,
} from "./gemini-errors.ts";
import { parseCountTokensRequest, parseGeminiRequest } from "./gemini-request.ts";
import { type GeminiPlan, generateContentBody, streamChunks } from "./gemini-shapes.ts";
import { cutJson, writeGeminiStream } from "./gemini-stream.ts";
import { type FaultErrors, faultPreflight } from "./request-faults.ts";
import type { SandboxState } from "./state.ts";

export const GEMINI_PREFIX = "/gemini/v1beta";
/** Words of the thought summary sent for `includeThoughts` (fewer if the budget is smaller). */
export const THOUGHT_WORDS = 12;

type Method =
  | "generateContent"
  | "streamGenerateContent"
  | "countTokens"
  | "embedContent"
  | "batchEmbedContents";
const METHODS: readonly string[] = [
  "generateContent",
  "streamGenerateContent",
  "countTokens",
  "embedContent",
  "batchEmbedContents",
];

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(";") : value;
}

function queryValue(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : undefined;
}

/** `gemini-2.5-flash:generateContent` → model and method. */
export function parseModelTarget(target: string): { model: string; method: string } | undefined {
  const decoded = decodeURIComponent(target);
  const colon = decoded.lastIndexOf(":");
  if (colon <= 0) return undefined;
  return { model: decoded.slice(0, colon), method: decoded.slice(colon + 1) };
}

function responseId(): string {
  return randomBytes(16).toString("base64url").replace(/[-_]/g, "x").slice(0, 22);
}

/** Google's answers to a bad fault spec and an injected status. */
const GOOGLE_FAULT_ERRORS: FaultErrors = {
  badSpec: (reply, message) => sendGoogleError(reply, invalidArgument(message)),
  status: (reply, status, headers) => sendGoogleError(reply, googleErrorForStatus(status), headers),
};

/** Chooses the fault and ends the exchange for the faults that come before a body. */
function preflight(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  texts: readonly string[],
) {
  return faultPreflight(request, reply, state, texts, GOOGLE_FAULT_ERRORS);
}

/** The planner's answer plus the thought summary `includeThoughts` asks for. */
export function planGeminiReply(
  chat: ChatRequest,
  thinking: { includeThoughts: boolean; thinkingBudget: number | undefined },
  fault: Pick<FaultSpec, "words" | "cachedTokens" | "offSchema">,
): GeminiPlan {
  const budget = thinking.thinkingBudget ?? -1; // -1: dynamic thinking
  const thoughtWords = thinking.includeThoughts
    ? Math.min(THOUGHT_WORDS, budget > 0 ? budget : THOUGHT_WORDS, chat.maxTokens ?? THOUGHT_WORDS)
    : 0;
  const thought =
    thoughtWords > 0
      ? ["Thinking:", ...pickWords(requestSeed(chat) ^ stableHash("thought"), thoughtWords)]
          .slice(0, thoughtWords)
          .join(" ")
      : undefined;
  const thoughtTokens = thought === undefined ? 0 : countTokens(thought);
  // Thoughts count against maxOutputTokens, as on Gemini.
  const capped =
    chat.maxTokens === undefined
      ? chat
      : { ...chat, maxTokens: Math.max(0, chat.maxTokens - thoughtTokens) };
  const plan = planChatReply(capped, { words: fault.words, offSchema: fault.offSchema });
  return {
    ...plan,
    cachedTokens: fault.cachedTokens,
    thoughtTokens,
    ...(thought === undefined ? {} : { thought }),
  };
}

async function generate(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  model: string,
  stream: boolean,
): Promise<FastifyReply | undefined> {
  const parsed = parseGeminiRequest(request.body, model, stream);
  if (!parsed.ok) return sendGoogleError(reply, invalidArgument(parsed.message));
  const { chat } = parsed.value;
  const texts = chat.messages.map((message) => message.text);
  const tooLong = promptOverWindow(model, texts, countPromptTokens(chat.messages));
  if (tooLong) {
    return sendGoogleError(
      reply,
      invalidArgument(
        `The input token count (${tooLong.tokens}) exceeds the maximum number of tokens allowed (${tooLong.window}).`,
      ),
    );
  }
  const checked = await preflight(request, reply, state, texts);
  if ("done" in checked) return checked.done;
  const { fault } = checked;
  const plan = planGeminiReply(chat, parsed.value, fault);
  const meta = { model, responseId: responseId() };
  if (!stream) {
    if (fault.dropAfter !== undefined) {
      reply.hijack();
      state.markDropped(reply.raw);
      reply.raw.socket?.destroy();
      return undefined;
    }
    const body = generateContentBody(meta, plan, !fault.noUsage);
    if (fault.malformedAfter !== undefined)
      return reply.code(200).type("application/json; charset=UTF-8").send(cutJson(body));
    return reply.code(200).send(body);
  }
  reply.hijack();
  const signal = closeSignal(reply.raw);
  await writeGeminiStream(
    reply.raw,
    {},
    queryValue(request, "alt") === "sse" ? "sse" : "json-array",
    streamChunks(meta, plan, !fault.noUsage),
    {
      chunkDelayMs: fault.chunkDelayMs ?? 0,
      dropAfter: fault.dropAfter,
      malformedAfter: fault.malformedAfter,
    },
    { signal, onDrop: () => state.markDropped(reply.raw) },
  );
  return undefined;
}

async function countTokensRoute(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  model: string,
): Promise<FastifyReply | undefined> {
  const parsed = parseCountTokensRequest(request.body, model);
  if (!parsed.ok) return sendGoogleError(reply, invalidArgument(parsed.message));
  const texts = parsed.value.map((message) => message.text);
  const checked = await preflight(request, reply, state, texts);
  if ("done" in checked) return checked.done;
  return reply.code(200).send({ totalTokens: countPromptTokens(parsed.value) });
}

export async function handleGeminiModelCall(
  request: FastifyRequest<{ Params: { "*": string } }>,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const target = parseModelTarget(request.params["*"] ?? "");
  if (!target || !METHODS.includes(target.method)) {
    const message = `Method not found: ${request.method} ${request.url.split("?")[0]}`;
    return sendGoogleError(reply, googleError(404, message, "NOT_FOUND"));
  }
  const key = headerText(request.headers, "x-goog-api-key") || queryValue(request, "key");
  if (!key?.trim()) return sendGoogleError(reply, GOOGLE_INVALID_KEY);
  switch (target.method as Method) {
    case "countTokens":
      return countTokensRoute(request, reply, state, target.model);
    case "embedContent":
    case "batchEmbedContents":
      return handleGeminiEmbed(request, reply, state, target.model, target.method as EmbedMethod);
    case "streamGenerateContent":
      return generate(request, reply, state, target.model, true);
    default:
      return generate(request, reply, state, target.model, false);
  }
}

function errorBody(error: FastifyError) {
  if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY")
    return invalidArgument("* GenerateContentRequest.contents: contents is not specified\n");
  if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY")
    return invalidArgument(`Invalid JSON payload received. ${error.message}`);
  const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  return status >= 500
    ? googleErrorForStatus(status)
    : googleError(status, error.message, googleStatusName(status));
}

export function registerGeminiRoutes(app: FastifyInstance, state: SandboxState): void {
  app.register(
    async (scope) => {
      scope.setErrorHandler((error: FastifyError, request, reply) => {
        const body = errorBody(error);
        if (body.error.code >= 500) request.log.error(error);
        return sendGoogleError(reply, body);
      });
      scope.setNotFoundHandler((request, reply) => {
        const message = `Unknown sandbox path (${request.method} ${request.url.split("?")[0]})`;
        return sendGoogleError(reply, googleError(404, message, "NOT_FOUND"));
      });
      scope.post<{ Params: { "*": string } }>("/models/*", (request, reply) =>
        handleGeminiModelCall(request, reply, state),
      );
    },
    { prefix: GEMINI_PREFIX },
  );
}
