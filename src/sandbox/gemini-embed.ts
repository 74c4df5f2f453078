/**
 * @module sandbox/gemini-embed
 * The Gemini API's embedding methods under `/gemini/v1beta/models/{model}`: `:embedContent`
 * (`{content:{parts:[{text}]}, taskType?, title?, outputDimensionality?}` → `{embedding:{values}}`)
 * and `:batchEmbedContents` (`{requests:[…]}` → `{embeddings:[{values}]}`, at most 100 requests).
 * Like the real API, no usage is reported. `text-embedding-004` (shut down on 2026-01-14) and
 * any model that does not embed answer the exact 404 `NOT_FOUND` body. Dispatched from
 * `gemini-generate.ts`, which has already checked the API key.
 * @see https://ai.google.dev/api/embeddings
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { isRecord } from "./chat-request.ts";
import { embeddingVector } from "./embed-vectors.ts";
import {
  type GoogleErrorBody,
  googleError,
  googleErrorForStatus,
  invalidArgument,
  sendGoogleError,
} from "./gemini-errors.ts";
import { faultPreflight, sendEmbedBody } from "./request-faults.ts";
import type { SandboxState } from "./state.ts";

export type EmbedMethod = "embedContent" | "batchEmbedContents";
export const GEMINI_MAX_BATCH = 100;

/** Embedding models the sandbox serves: default size and the accepted `outputDimensionality`. */
export const GEMINI_EMBEDDING_MODELS: Readonly<
  Record<string, { defaultDimensions: number; min: number; max: number }>
> = {
  "gemini-embedding-001": { defaultDimensions: 3072, min: 128, max: 3072 },
  "gemini-embedding-2-preview": { defaultDimensions: 3072, min: 128, max: 3072 },
};

const TASK_TYPES = new Set([
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
]);

/** What the Gemini API answers for a retired or unknown model (verbatim for text-embedding-004). */
export function embedModelNotFound(model: string): GoogleErrorBody {
  return googleError(
    404,
    `models/${model} is not found for API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods.`,
    "NOT_FOUND",
  );
}

export const BATCH_LIMIT_MESSAGE = `* BatchEmbedContentsRequest.requests: at most ${GEMINI_MAX_BATCH} requests can be in one batch`;

type Checked = { ok: true; text: string; size: number } | { ok: false; message: string };

/** Validates one `EmbedContentRequest`; `where` names it in messages (e.g. `requests[3]`). */
function parseEmbedRequest(
  value: unknown,
  model: string,
  where: { proto: string; json: string },
): Checked {
  const fail = (message: string): Checked => ({ ok: false, message });
  const limits = GEMINI_EMBEDDING_MODELS[model]!;
  if (!isRecord(value)) return fail(`* ${where.proto}: request must be an object`);
  if (value.model !== undefined && String(value.model).replace(/^models\//, "") !== model) {
    return fail(
      `* ${where.proto}.model: model 'models/${model}' of the URL must match the request's model '${String(value.model)}'`,
    );
  }
  const content = value.content;
  const parts = isRecord(content) ? content.parts : undefined;
  if (!Array.isArray(parts) || parts.length === 0)
    return fail(`* ${where.proto}.content: content is not specified`);
  const texts = parts.map((part) => (isRecord(part) ? part.text : undefined));
  if (texts.some((text) => typeof text !== "string"))
    return fail(`* ${where.proto}.content.parts: only text parts can be embedded`);
  const text = (texts as string[]).join("\n");
  if (text.length === 0) return fail(`* ${where.proto}.content.parts[0].text: text is empty`);
  const taskType = value.taskType ?? value.task_type;
  if (taskType !== undefined && !TASK_TYPES.has(String(taskType))) {
    return fail(
      `Invalid value at '${where.json}task_type' (type.googleapis.com/google.ai.generativelanguage.v1beta.TaskType), "${String(taskType)}"`,
    );
  }
  // A title names the document being embedded: only for RETRIEVAL_DOCUMENT.
  if (
    value.title !== undefined &&
    (typeof value.title !== "string" || taskType !== "RETRIEVAL_DOCUMENT")
  )
    return fail(
      `* ${where.proto}.title: a title is only allowed with task type RETRIEVAL_DOCUMENT`,
    );
  const size =
    value.outputDimensionality ?? value.output_dimensionality ?? limits.defaultDimensions;
  if (
    typeof size !== "number" ||
    !Number.isInteger(size) ||
    size < limits.min ||
    size > limits.max
  ) {
    return fail(
      `* ${where.proto}.output_dimensionality: output dimensionality must be between ${limits.min} and ${limits.max}, got ${String(size)}`,
    );
  }
  return { ok: true, text, size };
}

function parseBody(
  body: unknown,
  model: string,
  method: EmbedMethod,
): { ok: true; items: Array<{ text: string; size: number }> } | { ok: false; message: string } {
  if (method === "embedContent") {
    const one = parseEmbedRequest(body, model, { proto: "EmbedContentRequest", json: "" });
    return one.ok ? { ok: true, items: [one] } : one;
  }
  const requests = isRecord(body) ? body.requests : undefined;
  if (!Array.isArray(requests) || requests.length === 0)
    return {
      ok: false,
      message: "* BatchEmbedContentsRequest.requests: requests is not specified",
    };
  if (requests.length > GEMINI_MAX_BATCH) return { ok: false, message: BATCH_LIMIT_MESSAGE };
  const items: Array<{ text: string; size: number }> = [];
  for (const [index, request] of requests.entries()) {
    const one = parseEmbedRequest(request, model, {
      proto: `BatchEmbedContentsRequest.requests[${index}]`,
      json: `requests[${index}].`,
    });
    if (!one.ok) return one;
    items.push(one);
  }
  return { ok: true, items };
}

export async function handleGeminiEmbed(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  model: string,
  method: EmbedMethod,
): Promise<FastifyReply | undefined> {
  if (!GEMINI_EMBEDDING_MODELS[model]) return sendGoogleError(reply, embedModelNotFound(model));
  const parsed = parseBody(request.body, model, method);
  if (!parsed.ok) return sendGoogleError(reply, invalidArgument(parsed.message));
  const texts = parsed.items.map((item) => item.text);
  const checked = await faultPreflight(request, reply, state, texts, {
    badSpec: (response, message) => sendGoogleError(response, invalidArgument(message)),
    status: (response, status, headers) =>
      sendGoogleError(response, googleErrorForStatus(status), headers),
  });
  if ("done" in checked) return checked.done;
  const vectors = parsed.items.map((item) => ({
    values: embeddingVector(model, item.text, item.size),
  }));
  const body = method === "embedContent" ? { embedding: vectors[0] } : { embeddings: vectors };
  return sendEmbedBody(reply, state, checked.fault, body);
}
