/**
 * @module http/route
 * Declaration for the non-model routes (account, admin, catalog, health): auth mode, schemas,
 * and a handler. Validation and OpenAPI come from the same schemas, as for model endpoints.
 * Authentication runs before the body is read; query strings are converted before validation.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Caller, readBearer } from "../auth/index.ts";
import type { Services } from "../core/services.ts";
import { compileValidator } from "../core/validate.ts";
import { GatewayError } from "../errors/index.ts";
import type { ErrorDialect } from "./error-renderer.ts";
import { registerRouteDoc } from "./openapi.ts";
import { consoleSessionToken } from "./session-cookie.ts";

/**
 * `key`: an sk- key; `account`: an sk- key or a login session (bearer token, or the console's
 * cookie with its header, see `session-cookie.ts`); `admin`: an admin account's key or session.
 */
export type AuthMode = "none" | "key" | "account" | "admin";

export interface RouteContext<B, Q> {
  body: B;
  query: Q;
  params: Record<string, string>;
  /** Present unless the route's auth mode is `none`. */
  caller: Caller;
  request: FastifyRequest;
  reply: FastifyReply;
  services: Services;
}

export interface RouteDefinition<B extends TSchema | undefined, Q extends TSchema | undefined> {
  method: "GET" | "POST" | "DELETE" | "PATCH";
  path: string;
  summary: string;
  tags: string[];
  auth: AuthMode;
  body?: B;
  query?: Q;
  response?: TSchema;
  successStatus?: number;
  dialect?: ErrorDialect;
  handler(
    context: RouteContext<
      B extends TSchema ? Static<B> : undefined,
      Q extends TSchema ? Static<Q> : undefined
    >,
  ): Promise<unknown>;
}

const NO_CALLER: Caller = { accountId: "", role: "user" };

export async function authenticate(
  services: Services,
  request: FastifyRequest,
  mode: AuthMode,
): Promise<Caller> {
  const token = readBearer(request.headers);
  switch (mode) {
    case "none":
      return NO_CALLER;
    case "key":
      return services.authenticator.authenticateKey(token);
    case "account":
      return services.authenticator.authenticateAccount(token ?? consoleSessionToken(request));
    case "admin": {
      const caller = await services.authenticator.authenticateAccount(
        token ?? consoleSessionToken(request),
      );
      if (caller.role !== "admin") throw new GatewayError("admin_required");
      return caller;
    }
  }
}

export function registerRoute<B extends TSchema | undefined, Q extends TSchema | undefined>(
  app: FastifyInstance,
  services: Services,
  definition: RouteDefinition<B, Q>,
): void {
  const validateBody = definition.body ? compileValidator(definition.body) : undefined;
  const validateQuery = definition.query ? compileValidator(definition.query) : undefined;
  registerRouteDoc(app, {
    method: definition.method,
    path: definition.path,
    summary: definition.summary,
    tags: definition.tags,
    body: definition.body,
    query: definition.query,
    response: definition.response,
    successStatus: definition.successStatus,
    security: definition.auth !== "none",
  });
  // Authentication runs before the body is read, so an anonymous client gets its 401 (or 403)
  // without the gateway buffering and parsing a body it would refuse anyway.
  const callers = new WeakMap<FastifyRequest, Caller>();
  app.route({
    method: definition.method,
    url: definition.path,
    config: { dialect: definition.dialect ?? "gateway" },
    onRequest: async (request) => {
      callers.set(request, await authenticate(services, request, definition.auth));
    },
    handler: async (request, reply) => {
      const caller =
        callers.get(request) ?? (await authenticate(services, request, definition.auth));
      type Context = Parameters<typeof definition.handler>[0];
      const body = (validateBody ? validateBody(request.body ?? {}) : undefined) as Context["body"];
      // Query values arrive as strings: `?limit=10` must satisfy an integer schema.
      const query = (
        validateQuery && definition.query
          ? validateQuery(Value.Convert(definition.query, request.query ?? {}))
          : undefined
      ) as Context["query"];
      const result = await definition.handler({
        body,
        query,
        params: request.params as Record<string, string>,
        caller,
        request,
        reply,
        services,
      });
      if (reply.sent) return reply;
      reply.code(definition.successStatus ?? 200);
      return result;
    },
  });
}
