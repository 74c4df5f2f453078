/**
 * @module mcp/reference
 * The API reference as Markdown, one document per endpoint, generated from the route
 * descriptions `/openapi.json` is built from (the same TypeBox schemas that validate requests):
 * what the endpoint does, its request fields and its answer's fields.
 */
import { plainSchema, type RouteDoc } from "../http/openapi.ts";

interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: unknown;
}

/**
 * The endpoint's slug in `switchyard://reference/{slug}`, unique among `docs`:
 * `/v1/chat/completions` → `chat-completions`; `/v1/videos/generations/:id` →
 * `videos-generations-id`. The `/v1/` prefix is dropped unless the same path also exists
 * without it (`GET /v1/healthz` → `v1-healthz`, `GET /healthz` → `healthz`). Methods other than
 * GET are prefixed (`delete-account-keys-id`), except a POST whose path has no GET
 * (`POST /v1/account/keys` → `post-account-keys` beside `GET` → `account-keys`).
 */
export function referenceSlug(
  doc: Pick<RouteDoc, "method" | "path">,
  docs: readonly Pick<RouteDoc, "method" | "path">[],
): string {
  const short = doc.path.replace(/^\/v1\//, "/");
  const keepsPrefix = short !== doc.path && docs.some((other) => other.path === short);
  const slug = (keepsPrefix ? doc.path : short)
    .replace(/[^a-zA-Z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  const bare =
    doc.method === "GET" ||
    (doc.method === "POST" &&
      !docs.some((other) => other.method === "GET" && other.path === doc.path));
  return bare ? slug : `${doc.method.toLowerCase()}-${slug}`;
}

function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(" \\| ");
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" \\| ");
  const type = Array.isArray(schema.type) ? schema.type.join(" \\| ") : (schema.type ?? "any");
  return type === "array" && schema.items ? `array of ${typeOf(schema.items)}` : type;
}

function limits(schema: JsonSchema): string {
  const parts = [
    schema.minimum !== undefined ? `min ${schema.minimum}` : "",
    schema.maximum !== undefined ? `max ${schema.maximum}` : "",
    schema.maxLength !== undefined ? `at most ${schema.maxLength} characters` : "",
    schema.default !== undefined ? `default \`${JSON.stringify(schema.default)}\`` : "",
  ].filter(Boolean);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

function fieldTable(schema: JsonSchema | undefined): string {
  const properties = schema?.properties;
  if (!properties || Object.keys(properties).length === 0) return "Any JSON object.\n";
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(properties).map(([name, field]) => {
    const text = `${field.description ?? ""}${limits(field)}`
      .replace(/\|/g, "\\|")
      .replace(/\n/g, " ");
    return `| \`${name}\` | ${typeOf(field)} | ${required.has(name) ? "yes" : "no"} | ${text} |`;
  });
  return ["| Field | Type | Required | Notes |", "|---|---|---|---|", ...rows, ""].join("\n");
}

export function referenceMarkdown(doc: RouteDoc): string {
  const lines = [`# ${doc.method} ${doc.path}`, "", doc.summary, ""];
  if (doc.security === false) lines.push("No key needed.", "");
  else lines.push("Authenticated with `Authorization: Bearer sk-…`.", "");
  if (doc.query)
    lines.push("## Query parameters", "", fieldTable(plainSchema(doc.query) as JsonSchema));
  if (doc.body) {
    lines.push(
      `## Request body (${doc.bodyContentType ?? "application/json"})`,
      "",
      fieldTable(plainSchema(doc.body) as JsonSchema),
    );
  }
  lines.push(
    `## Answer (${doc.successStatus ?? 200}, ${doc.responseContentType ? [doc.responseContentType].flat().join(" or ") : "application/json"})`,
    "",
  );
  lines.push(
    doc.responseContentType
      ? "The raw bytes.\n"
      : fieldTable(doc.response ? (plainSchema(doc.response) as JsonSchema) : undefined),
  );
  lines.push(
    'Errors answer with their catalogue status and `{"error":{"message","type","code"}}` (DashScope and Anthropic dialects where the endpoint speaks them); the MCP tools return the same code and message as an `isError` result.',
  );
  return lines.join("\n");
}
