/**
 * @module endpoints/chat-completions/route
 * `POST /v1/chat/completions`: the endpoint declaration. The pipeline in `core/model-call`
 * does auth, model checks, validation, quotas and billing; `operation.ts` does the work.
 */

import { openAIAttribution } from "../../core/attribution.ts";
import type { ModelEndpoint } from "../../core/operation.ts";
import { estimateChatCost, outputCap, withOutputCap } from "./estimate-chat-cost.ts";
import { runChatCompletion } from "./operation.ts";
import { ChatCompletionRequest, ChatCompletionResponse } from "./schema.ts";
import { validateChatRequest } from "./validate-chat-request.ts";

export const chatCompletionsEndpoint: ModelEndpoint<typeof ChatCompletionRequest> = {
  method: "POST",
  path: "/v1/chat/completions",
  streams: true,
  summary:
    "Create a chat completion (OpenAI protocol; `stream: true` answers with Server-Sent Events).",
  tags: ["chat"],
  kinds: ["chat"],
  body: ChatCompletionRequest,
  response: ChatCompletionResponse,
  dialect: "gateway",
  nullMeansAbsent: true,
  validateForModel: validateChatRequest,
  attribution: openAIAttribution,
  estimateCost: estimateChatCost,
  outputCap: { of: outputCap, with: withOutputCap },
  run: runChatCompletion,
};
