/**
 * @module sandbox/embed-voyage
 * The Voyage AI embeddings API at `POST /voyage/v1/embeddings`: `input` (string or list of at
 * most 1,000), `output_dimension` (256, 512, 1024, 2048 for the 4-series), `output_dtype`
 * (`float`, `int8`, `uint8`, or bit-packed `binary`/`ubinary`), `encoding_format` (`null` or `base64`), `input_type`, `truncation`.
 * The per-model token caps per batch (120K / 320K / 1M) are enforced, an OpenAI-style
 * `dimensions` is rejected, and every error is FastAPI's `{"detail": "..."}`. Usage reports
 * `total_tokens` only.
 * @see https://docs.voyageai.com/reference/embeddings-api
 */
import { randomBytes } from "node:crypto";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isRecord } from "./chat-request.ts";
import {
  quantizedBase64,
  quantizeVector,
  VOYAGE_DTYPES,
  type VoyageDtype,
} from "./embed-quantize.ts";
import { embeddingTokens, embeddingVector } from "./embed-vectors.ts";
import { faultPreflight, hasBearerKey, sendEmbedBody } from "./request-faults.ts";
import type { SandboxState } from "./state.ts";

export const VOYAGE_EMBEDDINGS_PATH = "/voyage/v1/embeddings";
export const VOYAGE_MAX_INPUTS = 1000;
/** Tokens one input may carry (longer inputs are truncated, or rejected with `truncation: false`). */
export const VOYAGE_CONTEXT_TOKENS = 32_000;

/** Tokens per submitted batch, by model. */
export const VOYAGE_TOKEN_CAPS: Readonly<Record<string, number>> = {
  "voyage-4-large": 120_000,
  "voyage-4": 320_000,
  "voyage-4-lite": 1_000_000,
};
const SIZES = [256, 512, 1024, 2048];
const INPUT_TYPES = [null, "query", "document"];

/** The `detail` Voyage sends for an error status (used by `status=N` faults). */
export function voyageDetailForStatus(status: number): string {
  switch (status) {
    case 400:
      return "Invalid request.";
    case 401:
      return "Provided API key is invalid.";
    case 403:
      return "Forbidden: your IP address is not allowed to access the API.";
    case 429:
      return "You have exceeded your rate limit. Please slow down your requests or contact support to increase the limit.";
    case 500:
      return "Internal server error.";
    default:
      return status >= 500
        ? "The service is temporarily unavailable. Please try again later."
        : `Request failed with status ${status}.`;
  }
}

function sendDetail(
  reply: FastifyReply,
  status: number,
  detail: string,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type("application/json").send({ detail });
}

/** Validates the body; the error text, or the texts and options to embed. */
function parseVoyageRequest(body: Record<string, unknown>):
  | { ok: false; detail: string }
  | {
      ok: true;
      model: string;
      texts: string[];
      size: number;
      base64: boolean;
      dtype: VoyageDtype;
    } {
  const fail = (detail: string) => ({ ok: false as const, detail });
  if ("dimensions" in body) return fail("Argument 'dimensions' is not supported");
  const model = body.model;
  if (typeof model !== "string") return fail("Argument 'model' is required.");
  const cap = VOYAGE_TOKEN_CAPS[model];
  if (cap === undefined) {
    const known = Object.keys(VOYAGE_TOKEN_CAPS).join(", ");
    return fail(`Model ${model} is not supported. Supported models are ${known}.`);
  }
  const input = body.input;
  const texts = typeof input === "string" ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== "string"))
    return fail("Argument 'input' must be a non-empty string or a non-empty list of strings.");
  if (texts.length > VOYAGE_MAX_INPUTS) {
    return fail(
      `Request to model '${model}' failed. The max allowed batch size is ${VOYAGE_MAX_INPUTS}. Your batch has ${texts.length} inputs. Please lower the number of inputs in the batch.`,
    );
  }
  const empty = texts.findIndex((text: string) => text.length === 0);
  if (empty !== -1) return fail(`Input at index ${empty} is an empty string.`);
  if (body.input_type !== undefined && !INPUT_TYPES.includes(body.input_type as string | null))
    return fail("Argument 'input_type' must be None, 'query' or 'document'.");
  const truncation = body.truncation ?? true;
  let tokens = 0;
  for (const [index, text] of (texts as string[]).entries()) {
    const count = embeddingTokens(text);
    if (count > VOYAGE_CONTEXT_TOKENS && truncation === false) {
      return fail(
        `Request to model '${model}' failed. Input at index ${index} has ${count} tokens, which exceeds the context length of ${VOYAGE_CONTEXT_TOKENS} tokens. Set truncation=True to truncate it.`,
      );
    }
    tokens += Math.min(count, VOYAGE_CONTEXT_TOKENS);
  }
  if (tokens > cap) {
    return fail(
      `Request to model '${model}' failed. The max allowed tokens per submitted batch is ${cap}. Your batch has ${tokens} tokens after truncation. Please lower the number of tokens in the batch.`,
    );
  }
  const size = body.output_dimension ?? 1024;
  if (typeof size !== "number" || !SIZES.includes(size))
    return fail(
      `Argument 'output_dimension' must be one of ${SIZES.join(", ")} for model ${model}.`,
    );
  const dtype = (body.output_dtype ?? "float") as VoyageDtype;
  if (!VOYAGE_DTYPES.includes(dtype))
    return fail(
      `Argument 'output_dtype' must be one of ${VOYAGE_DTYPES.map((name) => `'${name}'`).join(", ")}.`,
    );
  const format = body.encoding_format ?? null;
  if (format !== null && format !== "base64")
    return fail("Argument 'encoding_format' must be None or 'base64'.");
  return {
    ok: true,
    model,
    texts: texts as string[],
    size,
    base64: format === "base64",
    dtype,
  };
}

export async function handleVoyageEmbeddings(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
): Promise<FastifyReply | undefined> {
  const headers = { "request-id": randomBytes(12).toString("hex") };
  if (!hasBearerKey(request.headers))
    return sendDetail(reply, 401, voyageDetailForStatus(401), headers);
  if (!isRecord(request.body)) return sendDetail(reply, 400, "Request body must be a JSON object.");
  const parsed = parseVoyageRequest(request.body);
  if (!parsed.ok) return sendDetail(reply, 400, parsed.detail, headers);
  const checked = await faultPreflight(request, reply, state, parsed.texts, {
    badSpec: (response, message) => sendDetail(response, 400, message, headers),
    status: (response, status, extra) =>
      sendDetail(response, status, voyageDetailForStatus(status), { ...headers, ...extra }),
  });
  if ("done" in checked) return checked.done;
  const tokens = parsed.texts.reduce(
    (sum, text) => sum + Math.min(embeddingTokens(text), VOYAGE_CONTEXT_TOKENS),
    0,
  );
  const data = parsed.texts.map((text, index) => {
    const vector = quantizeVector(embeddingVector(parsed.model, text, parsed.size), parsed.dtype);
    return {
      object: "embedding",
      embedding: parsed.base64 ? quantizedBase64(vector, parsed.dtype) : vector,
      index,
    };
  });
  const body = {
    object: "list",
    data,
    model: parsed.model,
    ...(checked.fault.noUsage ? {} : { usage: { total_tokens: tokens } }),
  };
  return sendEmbedBody(reply, state, checked.fault, body, headers);
}

export function registerVoyageRoutes(app: FastifyInstance, state: SandboxState): void {
  app.register(async (scope) => {
    // Body errors (bad JSON, empty body) in Voyage's shape too.
    scope.setErrorHandler((error: FastifyError, _request, reply) => {
      const status =
        error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
      return sendDetail(
        reply,
        status,
        status >= 500 ? voyageDetailForStatus(status) : error.message,
      );
    });
    scope.post(VOYAGE_EMBEDDINGS_PATH, (request, reply) =>
      handleVoyageEmbeddings(request, reply, state),
    );
  });
}
