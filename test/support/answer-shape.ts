/**
 * @module test/support/answer-shape
 * Says whether an answer is one the gateway documents (docs/errors.md): never a 5xx for a
 * client's input, an `x-request-id` always, and every 4xx in the shape of the route's dialect —
 * gateway `{"error":{"message","type","code"[,"param"]}}`, provider `{"code","message",
 * "request_id","error":{"message","type","code"}}`, Anthropic
 * `{"type":"error","error":{"type","message","details":{"error_code"}},"request_id"}` — with
 * the rules that override the dialect: 401 bad key gateway style (with `WWW-Authenticate`), 402
 * `{"error":{"message"}}`, and a quota 429 provider style `Throttling.RateQuota`.
 */

export type Dialect = "gateway" | "provider" | "anthropic";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export async function readAnswer(response: Response): Promise<Answer> {
  return { status: response.status, headers: response.headers, text: await response.text() };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasExactly(value: Json, required: string[], optional: string[] = []): boolean {
  const keys = Object.keys(value);
  return (
    required.every((key) => typeof value[key] === "string" && (value[key] as string).length > 0) &&
    keys.every((key) => required.includes(key) || optional.includes(key)) &&
    optional.every((key) => value[key] === undefined || typeof value[key] === "string")
  );
}

function gatewayShape(body: Json): boolean {
  return (
    Object.keys(body).length === 1 &&
    isObject(body.error) &&
    hasExactly(body.error, ["message", "type", "code"], ["param"])
  );
}

/** Provider style with the `error` object that repeats its code and message for the SDKs. */
function providerShape(body: Json): boolean {
  return (
    hasExactly({ ...body, error: "x" }, ["code", "message", "request_id", "error"]) &&
    isObject(body.error) &&
    hasExactly(body.error, ["message", "type", "code"]) &&
    body.error.code === body.code &&
    body.error.message === body.message
  );
}

function anthropicShape(body: Json): boolean {
  return (
    body.type === "error" &&
    isObject(body.error) &&
    isObject(body.error.details) &&
    hasExactly(body.error.details, ["error_code"]) &&
    hasExactly({ ...body.error, details: "x" }, ["type", "message", "details"]) &&
    hasExactly({ ...body, error: "x", type: "x" }, ["type", "error", "request_id"])
  );
}

/** What is wrong with an answer; empty when it is documented for one of `dialects`. */
export function answerProblems(answer: Answer, dialects: Dialect[]): string[] {
  const problems: string[] = [];
  const { status, headers, text } = answer;
  if (status >= 500 || status < 200) problems.push(`status ${status}`);
  if (!/^req_[0-9A-Za-z]{20}$/.test(headers.get("x-request-id") ?? ""))
    problems.push(`x-request-id ${headers.get("x-request-id")}`);
  if (status < 400) return problems;
  if (!/^application\/json/.test(headers.get("content-type") ?? ""))
    problems.push(`content-type ${headers.get("content-type")}`);
  if (/statusCode|FST_|\bstack\b|\n\s+at /.test(text)) problems.push("framework or stack text");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [...problems, "body is not JSON"];
  }
  if (!isObject(body)) return [...problems, "body is not an object"];
  const shaped = dialects.includes("anthropic")
    ? anthropicShape(body)
    : (status === 401 && gatewayShape(body)) ||
      (status === 402 &&
        Object.keys(body).length === 1 &&
        isObject(body.error) &&
        hasExactly(body.error, ["message"])) ||
      (status === 429 && providerShape(body) && body.code === "Throttling.RateQuota") ||
      (status !== 401 &&
        status !== 402 &&
        ((dialects.includes("gateway") && gatewayShape(body)) ||
          (dialects.includes("provider") && providerShape(body))));
  const badKey = dialects.includes("anthropic") || text.includes('"invalid_api_key"');
  if (status === 401 && badKey && !headers.get("www-authenticate"))
    problems.push("401 without WWW-Authenticate");
  if (!shaped) problems.push(`not the ${dialects.join("/")} error shape for ${status}`);
  if (
    isObject(body) &&
    typeof body.request_id === "string" &&
    body.request_id !== headers.get("x-request-id")
  )
    problems.push("request_id differs from x-request-id");
  return problems;
}
