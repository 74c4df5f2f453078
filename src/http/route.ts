/**
 * @module http/route
 * Declaration for the non-model routes (account, admin, catalog, health): auth mode, schemas,
 * and a handler. Validation and OpenAPI come from the same schemas, as for model endpoints.
 * Authentication runs before the body is read; query strings are converted before validation.
 * A query parameter an authenticated route does not declare is refused (`400 invalid_request`
 * naming it), never ignored: a client paging with `after` or `offset` where the route pages with `cursor`
 * learns so at once instead of reading the first page again.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Caller, hasAdminPowers, readBearer } from "../auth/index.ts";
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
  /** Text media types answered instead of JSON when asked (`text/csv`), for OpenAPI. */
  alsoAnswers?: readonly string[];
  dialect?: ErrorDialect;
  handler(
    context: RouteContext<
      B extends TSchema ? Static<B> : undefined,
      Q extends TSchema ? Static<Q> : undefined
    >,
  ): Promise<unknown>;
}

/** The query of a plain list: `limit` (default 100, at most 1000) and `cursor`. */
export const ListPageQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: "Items per page; default 100." }),
  ),
  cursor: Type.Optional(Type.String({ description: "`next_cursor` of the previous page." })),
});

/** The page a `ListPageQuery` asks for. */
export function pageRequest(query: Static<typeof ListPageQuery>): {
  limit: number;
  cursor?: string;
} {
  return {
    limit: query.limit ?? 100,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

const NO_CALLER: Caller = { accountId: "", role: "user" };

/**
 * Query parameters every route takes: the Anthropic SDKs' beta namespace adds `?beta=true` to
 * any path it calls (Claude Code counts tokens so), which changes nothing here.
 */
const CLIENT_MARKERS = ["beta"];

/** Numbers as people write them in a query: decimal digits, no `0x10`, `1e3` or blank. */
const DECIMAL = { integer: /^-?\d{1,16}$/, number: /^-?\d{1,16}(\.\d{1,16})?$/ };

/**
 * Query values arrive as strings; those a schema reads as numbers are converted only when they
 * are written as decimals. TypeBox's conversion alone reads `1.5` and `1e2` as 1 and `0x10` as
 * 16 for an integer: a page the client did not ask for, without a word. Any other text stays a
 * string, which the schema then refuses (`400` naming the parameter).
 */
function convertQuery(schema: TSchema, raw: unknown): unknown {
  // Copied first: the conversion changes the object it is given.
  const written = raw !== null && typeof raw === "object" ? { ...raw } : raw;
  const converted = Value.Convert(schema, raw ?? {});
  if (
    raw === null ||
    typeof raw !== "object" ||
    converted === null ||
    typeof converted !== "object"
  )
    return converted;
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  for (const [name, value] of Object.entries(written as object)) {
    const type = properties?.[name]?.type;
    if (
      (type === "integer" || type === "number") &&
      typeof value === "string" &&
      !DECIMAL[type].test(value)
    )
      (converted as Record<string, unknown>)[name] = value;
  }
  return converted;
}

/** The query parameters a route's schema declares, and the client markers. */
function declaredParameters(schema: TSchema | undefined): ReadonlySet<string> {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return new Set([...Object.keys(properties ?? {}), ...CLIENT_MARKERS]);
}

/** Throws `400 invalid_request` for the first query parameter the route does not declare. */
export function refuseUndeclaredQuery(query: unknown, declared: ReadonlySet<string>): void {
  if (query === null || typeof query !== "object") return;
  for (const name of Object.keys(query)) {
    if (declared.has(name)) continue;
    const known = [...declared]
      .filter((item) => !CLIENT_MARKERS.includes(item))
      .map((item) => `\`${item}\``)
      .join(", ");
    throw new GatewayError(
      "invalid_request",
      {
        detail: `Unknown query parameter \`${name.slice(0, 100)}\`; ${
          known ? `this endpoint takes ${known}` : "this endpoint takes no query parameters"
        }.`,
      },
      { param: name.slice(0, 100) },
    );
  }
}

/**
 * Refuses a NUL character in a path parameter or a query value: no id or filter holds one, and
 * PostgreSQL refuses it in a text value, which would otherwise surface as a 500.
 */
export function refuseNulCharacters(values: unknown, where: "path" | "query"): void {
  if (values === null || typeof values !== "object") return;
  for (const [name, value] of Object.entries(values)) {
    const texts = Array.isArray(value) ? value : [value];
    if (!texts.some((text) => typeof text === "string" && text.includes("\u0000"))) continue;
    throw new GatewayError(
      "invalid_request",
      { detail: `The ${where} parameter \`${name.slice(0, 100)}\` contains a NUL character.` },
      { param: name.slice(0, 100) },
    );
  }
}

/**
 * Refuses a NUL character in any string of a (validated, so bounded) JSON body: no name, note,
 * address or setting of the account and admin APIs holds one, and PostgreSQL refuses it in a
 * text column, which would otherwise surface as a 500.
 */
export function refuseNulInBody(value: unknown, path = "", depth = 0): void {
  if (typeof value === "string") {
    if (!value.includes("\u0000")) return;
    const param = path.slice(0, 100) || "body";
    throw new GatewayError(
      "invalid_request",
      { detail: `The field \`${param}\` contains a NUL character.` },
      { param },
    );
  }
  if (value === null || typeof value !== "object" || depth > 32) return;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries())
      refuseNulInBody(item, `${path}[${index}]`, depth + 1);
    return;
  }
  for (const [name, item] of Object.entries(value)) {
    refuseNulInBody(name, path ? `${path}.${name}` : name, depth + 1);
    refuseNulInBody(item, path ? `${path}.${name}` : name, depth + 1);
  }
}

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
      if (!hasAdminPowers(caller)) throw new GatewayError("admin_required");
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
  const declaredQuery = declaredParameters(definition.query);
  registerRouteDoc(app, {
    method: definition.method,
    path: definition.path,
    summary: definition.summary,
    tags: definition.tags,
    body: definition.body,
    query: definition.query,
    response: definition.response,
    successStatus: definition.successStatus,
    alsoAnswers: definition.alsoAnswers,
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
      // Public probes (`/healthz`, `/readyz`, `/openapi.json`) take no input and read none, so a
      // load balancer's cache-busting query string does not fail them.
      if (definition.auth !== "none" || definition.query)
        refuseUndeclaredQuery(request.query, declaredQuery);
      refuseNulCharacters(request.params, "path");
      if (definition.query) refuseNulCharacters(request.query, "query");
      const body = (validateBody ? validateBody(request.body ?? {}) : undefined) as Context["body"];
      if (validateBody) refuseNulInBody(body);
      // Query values arrive as strings: `?limit=10` must satisfy an integer schema.
      const query = (
        validateQuery && definition.query
          ? validateQuery(convertQuery(definition.query, request.query))
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
