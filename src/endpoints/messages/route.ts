/**
 * @module endpoints/messages/route
 * `POST /v1/messages` (the Anthropic Messages protocol over any chat model, for Claude Code and
 * the Anthropic SDKs) and `POST /v1/messages/count_tokens`. Errors use the Anthropic dialect;
 * query strings such as `?beta=true` are ignored by routing.
 */
import type { FastifyInstance } from "fastify";
import { anthropicAttribution } from "../../core/attribution.ts";
import type { ModelEndpoint } from "../../core/operation.ts";
import { resolveModel } from "../../core/resolve-model.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { SANDBOX_HEADER } from "../../http/response-headers.ts";
import { registerRoute } from "../../http/route.ts";
import { orderRoutes } from "../../routing/index.ts";
import {
  countMessagesTokens,
  estimateMessagesCost,
  messagesOutputCap,
} from "./estimate-messages-cost.ts";
import { forwardedHeaders, runMessages, withMaxTokens } from "./operation.ts";
import { refuseUnbilledMessagesOptions } from "./request-fields.ts";
import { CountTokensRequest, MessagesRequest } from "./schema.ts";

export const messagesEndpoint: ModelEndpoint<typeof MessagesRequest> = {
  method: "POST",
  path: "/v1/messages",
  streams: true,
  summary:
    "Create a message (Anthropic Messages protocol, any chat model; `stream: true` for events).",
  tags: ["messages"],
  kinds: ["chat"],
  body: MessagesRequest,
  dialect: "anthropic",
  validateForModel: refuseUnbilledMessagesOptions,
  attribution: anthropicAttribution,
  estimateCost: estimateMessagesCost,
  outputCap: {
    of: messagesOutputCap,
    with: (body, cap) => ({ ...body, ...withMaxTokens(body, cap) }),
  },
  run: runMessages,
};

/** `count_tokens` is free: proxied to Anthropic routes, counted locally for the others. */
export function registerCountTokensRoute(app: FastifyInstance, services: Services): void {
  registerRoute(app, services, {
    method: "POST",
    path: "/v1/messages/count_tokens",
    summary: "Count a Messages request's input tokens (free, not billed).",
    tags: ["messages"],
    auth: "key",
    dialect: "anthropic",
    body: CountTokensRequest,
    async handler({ body, caller, request, reply }) {
      if (!caller.key) throw new GatewayError("invalid_api_key");
      const model = resolveModel(services, caller.key, body.model, {
        kinds: ["chat"],
        path: "/v1/messages/count_tokens",
      });
      for (const route of orderRoutes(model)) {
        const native = services.providers.messagesPassthrough(route);
        if (!native) continue;
        try {
          const counted = await native.countTokens({
            body: { ...body, model: route.upstreamModel },
            headers: forwardedHeaders(request.headers),
          });
          if (route.sandbox) reply.header(SANDBOX_HEADER, "true");
          return counted;
        } catch (error) {
          request.log.warn(
            { err: error, requestId: request.id },
            "count_tokens upstream failed; counting locally",
          );
          break;
        }
      }
      return { input_tokens: await countMessagesTokens(body, { exact: true }) };
    },
  });
}
