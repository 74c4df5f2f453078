/**
 * @module endpoints/embeddings/route
 * `POST /v1/embeddings` (registered by `registerEmbeddingRoutes`): the endpoint declaration.
 * The pipeline in `core/model-call` does auth, model checks, validation, quotas and the
 * billing hold; `operation.ts` splits, calls and assembles.
 */
import type { FastifyInstance } from "fastify";
import type { ModelEndpoint } from "../../core/operation.ts";
import type { Services } from "../../core/services.ts";
import { registerModelEndpoint } from "../../http/model-endpoint.ts";
import { estimateEmbeddingCost } from "./estimate-embedding-cost.ts";
import { runEmbeddings } from "./operation.ts";
import { EmbeddingRequest, EmbeddingResponse } from "./schema.ts";
import { validateEmbeddingRequest } from "./validate-embedding-request.ts";

export const embeddingsEndpoint: ModelEndpoint<typeof EmbeddingRequest> = {
  method: "POST",
  path: "/v1/embeddings",
  summary:
    "Create embeddings (OpenAI protocol): a string or a batch of strings; large batches are split " +
    "by the upstream's limits and the vectors come back in `index` order.",
  tags: ["embeddings"],
  kinds: ["embedding"],
  body: EmbeddingRequest,
  response: EmbeddingResponse,
  dialect: "gateway",
  nullMeansAbsent: true,
  validateForModel: validateEmbeddingRequest,
  estimateCost: estimateEmbeddingCost,
  run: runEmbeddings,
};

export function registerEmbeddingRoutes(app: FastifyInstance, services: Services): void {
  registerModelEndpoint(app, services, embeddingsEndpoint);
}
