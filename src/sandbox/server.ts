/**
 * @module sandbox/server
 * The sandbox HTTP server: a Fastify app speaking the upstream vendors' wire protocols with
 * deterministic output and injectable faults. Owns wiring only: request tracking and logging,
 * vendor-shaped error and not-found handlers, and the routes of the other sandbox modules.
 */
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { ADMIN_PREFIX, registerAdminRoutes } from "./admin-routes.ts";
import { registerAnthropicRoutes } from "./anthropic-messages.ts";
import {
  handleOpenAIEmbeddings,
  isEmbeddingsPath,
  registerEmbeddingRoutes as registerSandboxEmbeddingRoutes,
} from "./embeddings.ts";
import { registerGeminiRoutes } from "./gemini-generate.ts";
import { registerImageRoutes } from "./image-routes.ts";
import { handleChatCompletions, isChatCompletionsPath } from "./openai-chat.ts";
import { openAIError, openAIErrorForStatus } from "./openai-errors.ts";
import { handleResponses, isResponsesPath } from "./openai-responses.ts";
import { registerSpeechRoutes as registerSandboxSpeechRoutes } from "./speech.ts";
import { type LoggedRequest, SandboxState, type SandboxStats } from "./state.ts";
import { registerVideoRoutes } from "./video/video-routes.ts";

export type { LoggedRequest, SandboxStats } from "./state.ts";
export { SandboxState } from "./state.ts";

export interface SandboxAppOptions {
  logger?: boolean;
  /** Share state with the caller (e.g. to read stats in-process); a fresh one by default. */
  state?: SandboxState;
}

export interface SandboxOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on; `127.0.0.1` by default. */
  host?: string;
  logger?: boolean;
}

export interface RunningSandbox {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:49152`. */
  url: string;
  port: number;
  close(): Promise<void>;
  stats(): SandboxStats;
}

const BODY_LIMIT = 32 * 1024 * 1024;

const JSON_PARSE_MESSAGE =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using " +
  "your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not " +
  "valid JSON.)";

const JSON_BODY_ERRORS = new Set(["FST_ERR_CTP_INVALID_JSON_BODY", "FST_ERR_CTP_EMPTY_JSON_BODY"]);

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Builds the sandbox app without listening (use `inject`, or `listen` yourself). */
export function buildSandboxApp(options: SandboxAppOptions = {}): FastifyInstance {
  const state = options.state ?? new SandboxState();
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: true,
  });
  const logged = new WeakMap<IncomingMessage, LoggedRequest>();

  app.addHook("onRequest", async (request, reply) => {
    const path = pathOf(request.url);
    if (path.startsWith(ADMIN_PREFIX)) return;
    state.track(reply.raw);
    const entry = { method: request.method, path, headers: request.headers, body: null };
    const bytes = Number(request.headers["content-length"]) || 0;
    logged.set(request.raw, state.record({ ...entry, at: new Date().toISOString() }, bytes));
  });
  app.addHook("preHandler", async (request) => {
    const entry = logged.get(request.raw);
    if (entry) entry.body = request.body ?? null;
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status =
      error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error(error);
      return reply.code(status).send(openAIErrorForStatus(status));
    }
    const message = JSON_BODY_ERRORS.has(error.code) ? JSON_PARSE_MESSAGE : error.message;
    return reply.code(status).send(openAIError(message, "invalid_request_error"));
  });

  app.setNotFoundHandler((request, reply) => {
    const message = `Unknown sandbox path (${request.method} ${pathOf(request.url)})`;
    return reply.code(404).send(openAIError(message, "invalid_request_error", null, "not_found"));
  });

  registerAdminRoutes(app, state);
  registerAnthropicRoutes(app, state);
  registerGeminiRoutes(app, state);
  registerSandboxEmbeddingRoutes(app, state);
  registerSandboxSpeechRoutes(app, state);
  registerImageRoutes(app, state);
  registerVideoRoutes(app, state);
  app.post("/*", (request, reply) => {
    const path = pathOf(request.url);
    if (isChatCompletionsPath(path)) return handleChatCompletions(request, reply, state);
    if (isResponsesPath(path)) return handleResponses(request, reply, state);
    if (isEmbeddingsPath(path)) return handleOpenAIEmbeddings(request, reply, state);
    return reply.callNotFound();
  });
  return app;
}

/** Starts the sandbox on `host:port` (127.0.0.1 and a free port by default). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const state = new SandboxState();
  const app = buildSandboxApp({ logger: options.logger ?? false, state });
  const host = options.host ?? "127.0.0.1";
  await app.listen({ port: options.port ?? 0, host });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: formatUrl(host, port),
    port,
    close: () => app.close(),
    stats: () => state.stats(),
  };
}
