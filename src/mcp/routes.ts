/**
 * @module mcp/routes
 * `/mcp` on the gateway's port (the MCP Streamable HTTP transport of the official SDK): POST for
 * JSON-RPC, GET for the server-to-client stream, DELETE to end a session. Every request is
 * authenticated with the same `sk-` keys before the transport sees it (401 with
 * `WWW-Authenticate: Bearer`, no session); a session belongs to the key that opened it; a
 * browser `Origin` not allowed gets 403; batches get 400. Also the protected-resource metadata
 * (RFC 9728) saying Bearer keys in the header are how to authenticate.
 */
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  isInitializeRequest,
  isJSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { readBearer } from "../auth/index.ts";
import type { KeyCaller, ModelCallRunner } from "../core/model-call-runner.ts";
import type { ModelEndpointSet } from "../core/model-endpoints.ts";
import type { Services } from "../core/services.ts";
import { BEARER_CHALLENGE, toGatewayError } from "../http/error-renderer.ts";
import { createImageReadGate } from "./image-read-gate.ts";
import { type CallerInfo, createMcpServer } from "./mcp-server.ts";
import { createSessionStore, type McpSession } from "./sessions.ts";

export const MCP_PATH = "/mcp";
const SESSION_HEADER = "mcp-session-id";

/** A JSON-RPC error answered over plain HTTP (before or instead of the transport). */
function rpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) {
  return reply
    .code(status)
    .headers(headers)
    .send({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/** The gateway's base URL as the client sees it (`server.public_url` when set). */
function baseUrl(services: Services, request: FastifyRequest): string {
  const configured = services.config.server.public_url;
  if (configured) return configured.replace(/\/+$/, "");
  return `${request.protocol}://${request.host}`;
}

export function registerMcpRoutes(
  app: FastifyInstance,
  services: Services,
  deps: { runner: ModelCallRunner; endpoints: ModelEndpointSet },
): void {
  const config = services.config.mcp;
  if (!config.enabled) return;
  const sessions = createSessionStore({
    idleMs: config.session_idle_seconds * 1000,
    maxPerKey: config.max_sessions_per_key,
    maxPerAccount: config.max_sessions_per_account,
  });
  // Shutdown drains: a call in flight may finish within `server.shutdown_grace_seconds`, after
  // which its connection is cut. Shortly before that, the sessions are closed, which answers each
  // call still in flight with an error for its id (and aborts it) while its stream can carry it.
  let shutdownTimer: NodeJS.Timeout | undefined;
  app.addHook("preClose", (done) => {
    const graceMs = services.config.server.shutdown_grace_seconds * 1000;
    shutdownTimer = setTimeout(
      () => void sessions.closeAll(),
      Math.max(0, graceMs - Math.min(500, graceMs / 2)),
    );
    shutdownTimer.unref();
    done();
  });
  app.addHook("onClose", () => {
    clearTimeout(shutdownTimer);
    return sessions.closeAll();
  });
  const serverDeps = {
    services,
    ...deps,
    imageReads: createImageReadGate(),
    routeDocs: app.routeDocs,
  };

  for (const path of [
    "/.well-known/oauth-protected-resource",
    `/.well-known/oauth-protected-resource${MCP_PATH}`,
  ]) {
    app.get(path, (request, reply) =>
      reply.header("cache-control", "public, max-age=3600").send({
        resource: `${baseUrl(services, request)}${MCP_PATH}`,
        bearer_methods_supported: ["header"],
        resource_name: "Switchyard AI gateway",
        resource_documentation: `${baseUrl(services, request)}/openapi.json`,
      }),
    );
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    try {
      return await services.authenticator.authenticateKey(readBearer(request.headers));
    } catch (error) {
      const failure = toGatewayError(error, request.id);
      const headers: Record<string, string> = { ...failure.headers };
      if (failure.status === 401) headers["www-authenticate"] = BEARER_CHALLENGE;
      await rpcError(reply, failure.status, -32000, failure.message, headers);
      return undefined;
    }
  }

  async function openSession(
    caller: KeyCaller,
    inFlight: Set<RequestId>,
  ): Promise<StreamableHTTPServerTransport> {
    const server = createMcpServer(serverDeps);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        const session: McpSession = {
          id,
          keyId: caller.key.id,
          accountId: caller.accountId,
          transport,
          server,
          lastUsed: Date.now(),
          inFlight,
        };
        sessions.add(session);
      },
    });
    // Before connect: the protocol wraps this hook rather than being replaced by it.
    transport.onclose = () => {
      if (transport.sessionId) sessions.remove(transport.sessionId);
    };
    await server.connect(transport);
    return transport;
  }

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: MCP_PATH,
    handler: async (request, reply) => {
      const origin = request.headers.origin;
      if (origin !== undefined && !config.allowed_origins.includes(origin)) {
        return rpcError(reply, 403, -32000, `Origin '${origin.slice(0, 200)}' is not allowed.`);
      }
      const caller = await authenticate(request, reply);
      if (!caller) return reply;
      if (request.method === "POST" && Array.isArray(request.body)) {
        return rpcError(
          reply,
          400,
          -32600,
          "Batch requests are not supported; send one message per POST.",
        );
      }
      const sessionId = request.headers[SESSION_HEADER];
      let transport: StreamableHTTPServerTransport;
      let inFlight: Set<RequestId>;
      if (typeof sessionId === "string") {
        const session = sessions.get(sessionId);
        // Another key's session is answered like an unknown one: it reveals nothing.
        if (!session || session.keyId !== caller.key.id)
          return rpcError(reply, 404, -32001, "Session not found.");
        transport = session.transport;
        inFlight = session.inFlight;
      } else if (request.method === "POST" && isInitializeRequest(request.body)) {
        inFlight = new Set();
        transport = await openSession(caller, inFlight);
      } else {
        return rpcError(
          reply,
          400,
          -32000,
          "Bad Request: no valid session id; send initialize first.",
        );
      }
      // A POST whose connection closes before its answer is written stops what it asked for.
      const dropped = new AbortController();
      reply.raw.once("close", () => {
        if (!reply.raw.writableFinished) dropped.abort();
      });
      const info: CallerInfo = { caller, dropped: dropped.signal };
      Object.assign(request.raw, {
        auth: { token: caller.key.id, clientId: caller.accountId, scopes: [], extra: info },
      });
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.hijack();
      // A request is in flight while its POST is open: closing the session answers it first.
      const body: unknown = request.body;
      if (request.method === "POST" && isJSONRPCRequest(body)) {
        const id = body.id;
        inFlight.add(id);
        reply.raw.once("close", () => inFlight.delete(id));
      }
      try {
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (error) {
        request.log.error({ err: error, requestId: request.id }, "MCP transport failed");
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { "content-type": "application/json" });
          reply.raw.end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32603, message: "Internal error." },
              id: null,
            }),
          );
        } else reply.raw.end();
      }
      return reply;
    },
  });
}
