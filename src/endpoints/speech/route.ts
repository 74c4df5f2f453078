/**
 * @module endpoints/speech/route
 * `POST /v1/audio/speech`: the endpoint declaration, registered by `registerSpeechRoutes`. The
 * pipeline in `core/model-call` does auth, model checks, validation, quotas and billing;
 * `operation.ts` does the work and answers with audio bytes.
 */
import type { FastifyInstance } from "fastify";
import type { ModelEndpoint } from "../../core/operation.ts";
import type { Services } from "../../core/services.ts";
import { registerModelEndpoint } from "../../http/model-endpoint.ts";
import { estimateSpeechCost } from "./estimate-speech-cost.ts";
import { runSpeech } from "./operation.ts";
import { planSpeech } from "./plan-speech.ts";
import { SpeechRequest } from "./schema.ts";

export const speechEndpoint: ModelEndpoint<typeof SpeechRequest> = {
  method: "POST",
  path: "/v1/audio/speech",
  summary:
    "Text to speech (OpenAI protocol): answers with audio bytes (`audio/mpeg` or `audio/wav`), streamed as they are made.",
  tags: ["audio"],
  kinds: ["speech"],
  body: SpeechRequest,
  responseContentType: ["audio/mpeg", "audio/wav"],
  dialect: "gateway",
  nullMeansAbsent: true,
  // Spec 7: an unsupported model (a chat model or an unknown one) is a 400 on speech.
  unknownModel: "endpoint_model_mismatch",
  validateForModel: (body, model) => {
    planSpeech(body, model);
  },
  estimateCost: estimateSpeechCost,
  run: runSpeech,
};

export function registerSpeechRoutes(app: FastifyInstance, services: Services): void {
  registerModelEndpoint(app, services, speechEndpoint);
}
