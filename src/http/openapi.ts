/**
 * @module http/openapi
 * Collects a description of every registered route (from the same TypeBox schemas that validate
 * requests) and builds the OpenAPI 3.1 document served at `/openapi.json`.
 */
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { FastifyInstance } from "fastify";
import { ERROR_CATALOGUE } from "../errors/index.ts";

export interface RouteDoc {
  method: string;
  path: string;
  summary: string;
  tags: string[];
  body?: TSchema;
  /** `multipart/form-data` bodies and other non-JSON bodies. */
  bodyContentType?: string;
  query?: TSchema;
  response?: TSchema;
  /** Response media types when the body is not JSON (e.g. `audio/mpeg` or `audio/wav`). */
  responseContentType?: string | readonly string[] | undefined;
  /** Text media types the route answers besides JSON when asked (`text/csv`). */
  alsoAnswers?: readonly string[] | undefined;
  successStatus?: number | undefined;
  /** With `stream: true` the success body is Server-Sent Events instead of JSON. */
  streams?: boolean | undefined;
  /** `false` for the few routes that need no key (health, register, login). */
  security?: boolean;
  /**
   * Error statuses the route answers besides those every route of its kind may (400 for a body
   * or query, 401 and 403 for a key, 404 for a path parameter, 413 for a body).
   */
  errorStatuses?: readonly number[];
}

/** The statuses a documented route may answer with an error (see `RouteDoc.errorStatuses`). */
function errorStatusesOf(doc: RouteDoc): number[] {
  const statuses = new Set(doc.errorStatuses ?? []);
  if (doc.body || doc.query) statuses.add(400);
  if (doc.body) statuses.add(413);
  if (doc.security !== false) {
    statuses.add(401);
    statuses.add(403);
  }
  if (doc.path.includes(":")) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}

/** An error response: the catalogue's codes of that status, in the error schema. */
function errorResponse(status: number): Record<string, unknown> {
  const codes = Object.entries(ERROR_CATALOGUE)
    .filter(([, definition]) => definition.status === status)
    .map(([code]) => `\`${code}\``);
  return {
    description: codes.length ? `Error: ${codes.join(", ")}` : "Error",
    content: { "application/json": { schema: ERROR_SCHEMA } },
  };
}

declare module "fastify" {
  interface FastifyInstance {
    routeDocs: RouteDoc[];
  }
}

export function registerRouteDoc(app: FastifyInstance, doc: RouteDoc): void {
  if (!app.hasDecorator("routeDocs")) app.decorate("routeDocs", []);
  app.routeDocs.push(doc);
}

const ERROR_SCHEMA = {
  type: "object",
  description:
    'Gateway-style error `{error}`; provider-style errors (`pictor` images, quota 429s) also carry `code`, `message` and `request_id` at the top level, and Anthropic-style ones (`/v1/messages`) `type: "error"` and `request_id`.',
  properties: {
    code: {
      type: "string",
      description: "Provider style: `InvalidParameter`, `Throttling.RateQuota`, …",
    },
    message: { type: "string", description: "Provider style: the error's text." },
    request_id: { type: "string", description: "The request's id (also in `x-request-id`)." },
    type: { type: "string", description: "Anthropic style: always `error`." },
    error: {
      type: "object",
      properties: {
        message: { type: "string" },
        type: { type: "string" },
        code: { type: "string" },
        param: { type: "string" },
      },
      required: ["message"],
    },
  },
};

/**
 * Copies the schema into plain JSON: TypeBox's symbol keys dropped, and the validator's own
 * wording of a rule (`errorMessage`, see core/validate) left out of the document.
 */
export function plainSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(schema, (key, value: unknown) =>
      key === "errorMessage" && typeof value === "string" ? undefined : value,
    ),
  ) as Record<string, unknown>;
}

function toOpenApiPath(path: string): string {
  return path.replace(/:(\w+)/g, "{$1}");
}

export function buildOpenApiDocument(
  docs: RouteDoc[],
  serverUrl?: string,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of docs) {
    const path = toOpenApiPath(doc.path);
    const parameters = [...doc.path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    if (doc.query) {
      const properties = (plainSchema(doc.query).properties ?? {}) as Record<
        string,
        Record<string, unknown>
      >;
      for (const [name, schema] of Object.entries(properties))
        parameters.push({ name, in: "query", required: false, schema } as never);
    }
    const successStatus = String(doc.successStatus ?? 200);
    const binaryTypes = doc.responseContentType ? [doc.responseContentType].flat() : [];
    const responseContent = binaryTypes.length
      ? Object.fromEntries(
          binaryTypes.map((type) => [type, { schema: { type: "string", format: "binary" } }]),
        )
      : {
          "application/json": {
            schema: doc.response ? plainSchema(doc.response) : { type: "object" },
          },
          ...(doc.streams && {
            "text/event-stream": {
              schema: {
                type: "string",
                description: "Server-Sent Events, when the request sets `stream: true`.",
              },
            },
          }),
          ...Object.fromEntries(
            (doc.alsoAnswers ?? []).map((type) => [type, { schema: { type: "string" } }]),
          ),
        };
    paths[path] ??= {};
    paths[path][doc.method.toLowerCase()] = {
      summary: doc.summary,
      tags: doc.tags,
      operationId: `${doc.method.toLowerCase()}${path.replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      ...(parameters.length ? { parameters } : {}),
      ...(doc.body
        ? {
            requestBody: {
              // A route whose schema takes `{}` takes no body at all (it is read as `{}`).
              required: !Value.Check(doc.body, {}),
              content: {
                [doc.bodyContentType ?? "application/json"]: { schema: plainSchema(doc.body) },
              },
            },
          }
        : {}),
      ...(doc.security === false ? { security: [] } : {}),
      responses: {
        // A 204 has no content: a client must not try to parse its empty body.
        [successStatus]:
          successStatus === "204"
            ? { description: "Success, no content" }
            : { description: "Success", content: responseContent },
        ...Object.fromEntries(
          errorStatusesOf(doc).map((status) => [String(status), errorResponse(status)]),
        ),
        default: {
          description: "Error",
          content: { "application/json": { schema: ERROR_SCHEMA } },
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Switchyard AI Gateway",
      version: "1.0.0",
      description:
        "One base URL and one key for chat, messages, images, video, embeddings and speech.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An `sk-` API key." },
      },
    },
    security: [{ bearerAuth: [] }],
    paths,
  };
}
