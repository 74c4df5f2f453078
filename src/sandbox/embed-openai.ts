/**
 * @module sandbox/embed-openai
 * The OpenAI-compatible `POST …/embeddings` route, served under every vendor prefix but Voyage's
 * (DashScope compatible mode `/dashscope/compatible-mode/v1/embeddings` above all). Limits and
 * error bodies follow the model's vendor: DashScope's `text-embedding-v*` take at most 10 inputs
 * (11+ answer the exact 400 DashScope sends), a fixed set of sizes, floats only; OpenAI's
 * `text-embedding-3-*` take 2,048 inputs, token-id input and base64.
 * @see https://www.alibabacloud.com/help/en/model-studio/embedding
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { isRecord } from "./chat-request.ts";
import { embeddingTokens, embeddingVector, float32Base64 } from "./embed-vectors.ts";
import {
  INVALID_API_KEY,
  openAIError,
  openAIErrorForStatus,
  sendOpenAIError,
} from "./openai-errors.ts";
import { type FaultErrors, faultPreflight, hasBearerKey, sendEmbedBody } from "./request-faults.ts";
import type { SandboxState } from "./state.ts";

interface CompatModel {
  vendor: "dashscope" | "openai";
  maxInputs: number;
  maxTokensPerInput: number;
  /** Allowed sizes, or the largest size when any size up to it is allowed. */
  dimensions: readonly number[] | { max: number };
  defaultDimensions: number;
}

const V3_SIZES = [1024, 768, 512, 256, 128, 64];
export const COMPAT_EMBEDDING_MODELS: Readonly<Record<string, CompatModel>> = {
  "text-embedding-v4": {
    vendor: "dashscope",
    maxInputs: 10,
    maxTokensPerInput: 8192,
    dimensions: [2048, 1536, ...V3_SIZES],
    defaultDimensions: 1024,
  },
  "text-embedding-v3": {
    vendor: "dashscope",
    maxInputs: 10,
    maxTokensPerInput: 8192,
    dimensions: V3_SIZES,
    defaultDimensions: 1024,
  },
  "text-embedding-3-small": {
    vendor: "openai",
    maxInputs: 2048,
    maxTokensPerInput: 8191,
    dimensions: { max: 1536 },
    defaultDimensions: 1536,
  },
  "text-embedding-3-large": {
    vendor: "openai",
    maxInputs: 2048,
    maxTokensPerInput: 8191,
    dimensions: { max: 3072 },
    defaultDimensions: 3072,
  },
};

/** True for any path ending in `/embeddings` (`/dashscope/compatible-mode/v1/…`, `/openai/v1/…`). */
export function isEmbeddingsPath(path: string): boolean {
  return path.endsWith("/embeddings");
}

/** DashScope compatible mode's error body, with `id` and `request_id` beside `error`. */
export function dashScopeError(
  message: string,
  requestId: string,
  code = "InvalidParameter",
  type = "InvalidParameter",
) {
  return { error: { code, param: null, message, type }, id: requestId, request_id: requestId };
}

/** The exact 400 DashScope answers for a batch above the model's limit. */
export function dashScopeBatchError(limit: number, requestId: string) {
  return dashScopeError(
    `<400> InternalError.Algo.InvalidParameter: Value error, batch size is invalid, it should not be larger than ${limit}.: input.contents`,
    requestId,
  );
}

type Parsed =
  | { ok: true; texts: string[]; tokenIds: boolean }
  | { ok: false; message: string; param: string };

function parseInput(input: unknown): Parsed {
  const invalid = (message: string): Parsed => ({ ok: false, message, param: "input" });
  const isTokens = (value: unknown): value is number[] =>
    Array.isArray(value) && value.length > 0 && value.every((item) => Number.isInteger(item));
  if (typeof input === "string") return { ok: true, texts: [input], tokenIds: false };
  if (!Array.isArray(input) || input.length === 0)
    return invalid("'input' must be a non-empty string or array.");
  if (input.every((item) => typeof item === "string"))
    return { ok: true, texts: input as string[], tokenIds: false };
  if (isTokens(input)) return { ok: true, texts: [input.join(" ")], tokenIds: true };
  if (input.every(isTokens))
    return { ok: true, texts: input.map((t) => t.join(" ")), tokenIds: true };
  return invalid("'input' must be a string, an array of strings or an array of token arrays.");
}

function allowsSize(model: CompatModel, size: number): boolean {
  const { dimensions } = model;
  return Array.isArray(dimensions)
    ? dimensions.includes(size)
    : size >= 1 && size <= (dimensions as { max: number }).max;
}

export async function handleOpenAIEmbeddings(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const requestId = randomBytes(16)
    .toString("hex")
    .replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
  const headers = { "x-request-id": requestId };
  if (!hasBearerKey(request.headers)) return sendOpenAIError(reply, 401, INVALID_API_KEY, headers);
  const body = isRecord(request.body) ? request.body : {};
  const badRequest = (message: string, param: string | null = null) =>
    sendOpenAIError(
      reply,
      400,
      openAIError(message, "invalid_request_error", param, "invalid_parameter_error"),
      headers,
    );
  if (typeof body.model !== "string") return badRequest("'model' is required.", "model");
  const model = COMPAT_EMBEDDING_MODELS[body.model];
  if (!model) {
    const message = `The model \`${body.model}\` does not exist or you do not have access to it.`;
    const error = openAIError(message, "invalid_request_error", null, "model_not_found");
    return sendOpenAIError(reply, 404, error, headers);
  }
  const dashscope = model.vendor === "dashscope";
  const algoError = (detail: string) =>
    reply
      .code(400)
      .headers(headers)
      .send(dashScopeError(`<400> InternalError.Algo.InvalidParameter: ${detail}`, requestId));
  const parsed = parseInput(body.input);
  if (!parsed.ok) return badRequest(parsed.message, parsed.param);
  const { texts } = parsed;
  if (texts.length > model.maxInputs) {
    if (dashscope)
      return reply.code(400).headers(headers).send(dashScopeBatchError(model.maxInputs, requestId));
    return badRequest(`'input' must have at most ${model.maxInputs} items.`, "input");
  }
  if (parsed.tokenIds && dashscope)
    return algoError("Value error, input must be a string or a list of strings.: input.contents");
  const empty = texts.findIndex((text) => text.length === 0);
  if (empty !== -1) {
    if (dashscope) return algoError("Value error, contents is empty.: input.contents");
    return badRequest(`'input[${empty}]' must not be empty.`, "input");
  }
  const long = texts.findIndex((text) => embeddingTokens(text) > model.maxTokensPerInput);
  if (long !== -1) {
    if (dashscope)
      return algoError(`Range of input length should be [1, ${model.maxTokensPerInput}]`);
    return badRequest(
      `This model's maximum context length is ${model.maxTokensPerInput} tokens; input ${long} is longer.`,
      "input",
    );
  }
  const size = body.dimensions ?? model.defaultDimensions;
  if (typeof size !== "number" || !Number.isInteger(size) || !allowsSize(model, size)) {
    if (dashscope) {
      const allowed = (model.dimensions as readonly number[]).join(", ");
      return algoError(
        `Value error, dimension is invalid, it should be one of [${allowed}].: parameters.dimension`,
      );
    }
    return badRequest(`Invalid 'dimensions': ${String(body.dimensions)}.`, "dimensions");
  }
  const format = body.encoding_format ?? "float";
  if (format !== "float" && (dashscope || format !== "base64")) {
    return dashscope
      ? algoError(`Value error, encoding_format only supports float.: parameters.encoding_format`)
      : badRequest("'encoding_format' must be 'float' or 'base64'.", "encoding_format");
  }

  const errors: FaultErrors = {
    badSpec: (response, message) =>
      sendOpenAIError(
        response,
        400,
        openAIError(message, "invalid_request_error", null, "invalid_sandbox_fault"),
        headers,
      ),
    status: (response, status, extra) =>
      sendOpenAIError(response, status, openAIErrorForStatus(status), { ...headers, ...extra }),
  };
  const checked = await faultPreflight(request, reply, state, texts, errors);
  if ("done" in checked) return checked.done;
  const tokens = texts.reduce((sum, text) => sum + embeddingTokens(text), 0);
  const data = texts.map((text, index) => {
    const vector = embeddingVector(body.model as string, text, size);
    return {
      object: "embedding",
      embedding: format === "base64" ? float32Base64(vector) : vector,
      index,
    };
  });
  const answer = {
    object: "list",
    data,
    model: body.model,
    ...(checked.fault.noUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
    ...(dashscope ? { id: requestId } : {}),
  };
  return sendEmbedBody(reply, state, checked.fault, answer, headers);
}
