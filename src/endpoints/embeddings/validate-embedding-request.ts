/**
 * @module endpoints/embeddings/validate-embedding-request
 * The rules of an embedding request beyond its schema: no empty input and no empty string, text
 * (not token ids) for upstreams that only take text, and `dimensions` among the sizes the
 * model's catalog entry lists (e.g. 256, 512, 1024, 2048 for `vec-*`).
 */
import type { CatalogModel } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { EmbeddingRequest } from "./schema.ts";

/** True when `input` is token ids (one array of integers, or arrays of them). */
export function isTokenInput(input: EmbeddingRequest["input"]): boolean {
  return Array.isArray(input) && input.some((item) => typeof item !== "string");
}

/** The texts of a request whose input is text (a string becomes a batch of one). */
export function inputTexts(input: EmbeddingRequest["input"]): string[] {
  if (typeof input === "string") return [input];
  return input.filter((item): item is string => typeof item === "string");
}

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError(
    "invalid_parameter",
    { detail: `Invalid '${param}': ${detail}` },
    { param },
  );
}

/** Whether an array input is all strings, all token ids, or all token-id arrays. */
function isUniform(input: EmbeddingRequest["input"]): boolean {
  if (!Array.isArray(input)) return true;
  const kinds = new Set(input.map((item) => (Array.isArray(item) ? "array" : typeof item)));
  return kinds.size === 1;
}

export function validateEmbeddingRequest(body: EmbeddingRequest, model: CatalogModel): void {
  if (!isUniform(body.input)) {
    throw invalid(
      "input",
      "must be a string, an array of strings, an array of token ids or an array of token-id arrays, not a mix.",
    );
  }
  if (isTokenInput(body.input)) {
    // None of the embedding upstreams of the catalog (DashScope compatible mode, Voyage, Gemini)
    // takes token ids; the gateway will not guess the vendor's tokenizer to turn them into text.
    throw invalid(
      "input",
      `model '${model.id}' takes text only: its upstream does not accept token ids. Send a string or an array of strings.`,
    );
  }
  if (body.input === "") throw invalid("input", "must not be empty.");
  if (Array.isArray(body.input)) {
    const empty = body.input.indexOf("");
    if (empty !== -1) throw invalid(`input[${empty}]`, "must not be an empty string.");
  }
  const allowed = model.capabilities?.dimensions;
  if (body.dimensions !== undefined && allowed && !allowed.includes(body.dimensions)) {
    const sizes = [...allowed].sort((a, b) => a - b).join(", ");
    throw invalid("dimensions", `model '${model.id}' supports ${sizes}; got ${body.dimensions}.`);
  }
}
