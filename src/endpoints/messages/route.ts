/**
 * @module endpoints/messages/route
 * `POST /v1/messages` (the Anthropic Messages protocol over any chat model, for Claude Code and
 * the Anthropic SDKs) and `POST /v1/messages/count_tokens`. Errors use the Anthropic dialect;
 * query strings such as `?beta=true` are ignored by routing.
 */
import type { FastifyInstance } from "fastify";
import { isModelAllowed } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import { SANDBOX_HEADER, vendorNotConfigured } from "../../http/model-availability.ts";
import type { ModelEndpoint } from "../../http/model-endpoint.ts";
import { modelNotFound } from "../../http/model-not-found.ts";
import { registerRoute } from "../../http/route.ts";
import type { Services } from "../../http/services.ts";
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
  summary:
    "Create a message (Anthropic Messages protocol, any chat model; `stream: true` for events).",
  tags: ["messages"],
  kinds: ["chat"],
  body: MessagesRequest,
  dialect: "anthropic",
  validateForModel: refuseUnbilledMessagesOptions,
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
      const model = services.catalog.resolve(body.model, caller.key?.modelAliases);
      if (!model) {
        throw modelNotFound(services.catalog, {
          requested: body.model,
          allowlist: caller.key?.models ?? [],
          kinds: ["chat"],
        });
      }
      if (model.endpoint !== "chat") {
        throw new GatewayError("endpoint_model_mismatch", {
          model: model.id,
          actual: model.endpoint,
          path: "/v1/messages/count_tokens",
        });
      }
      if (!isModelAllowed(caller.key?.models ?? [], model.id))
        throw new GatewayError("model_not_allowed", { model: model.id });
      const unconfigured = vendorNotConfigured(model);
      if (unconfigured) throw unconfigured;
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
