/**
 * @module endpoints/responses/route
 * `POST /v1/responses` (OpenAI's Responses API over every chat model) as a model endpoint of
 * the core pipeline, and the stored responses of the calling account:
 * `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items`. Another account's response is not found (404), as if
 * it did not exist. The hold and the output cap are the chat endpoint's, computed on the
 * equivalent chat request, so both paths hold and charge alike.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { openAIAttribution } from "../../core/attribution.ts";
import type { ModelEndpoint } from "../../core/operation.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { registerModelEndpoint } from "../../http/model-endpoint.ts";
import { registerRoute } from "../../http/route.ts";
import { estimateChatCost, outputCap } from "../chat-completions/estimate-chat-cost.ts";
import { toChatCompletionRequest } from "./convert-responses-request.ts";
import { runResponses } from "./operation.ts";
import { ResponseObject, ResponsesRequest } from "./schema.ts";
import {
  priorItems,
  resolveConversation,
  validateResponsesRequest,
} from "./validate-responses-request.ts";

export const responsesEndpoint: ModelEndpoint<typeof ResponsesRequest> = {
  method: "POST",
  path: "/v1/responses",
  streams: true,
  summary:
    "Create a response (OpenAI Responses API, any chat model; `stream: true` for events; `store` keeps it for `previous_response_id`).",
  tags: ["responses"],
  kinds: ["chat"],
  body: ResponsesRequest,
  response: ResponseObject,
  dialect: "gateway",
  nullMeansAbsent: true,
  validateForModel: validateResponsesRequest,
  resolve: resolveConversation,
  attribution: openAIAttribution,
  estimateCost: (body, model) =>
    estimateChatCost(toChatCompletionRequest(body, priorItems(body)).chat, model),
  outputCap: {
    of: (body, model) =>
      outputCap(
        {
          model: body.model,
          messages: [],
          ...(body.max_output_tokens !== undefined
            ? { max_completion_tokens: body.max_output_tokens }
            : {}),
        },
        model,
      ),
    with: (body, cap) =>
      body.max_output_tokens === cap ? body : { ...body, max_output_tokens: cap },
  },
  run: runResponses,
};

async function ownResponse(services: Services, accountId: string, id: string) {
  const stored = await services.store.findResponse(accountId, id);
  if (!stored) throw new GatewayError("response_not_found", { id: id.slice(0, 200) });
  return stored;
}

const InputItemsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  order: Type.Optional(Type.Union([Type.Literal("asc"), Type.Literal("desc")])),
  after: Type.Optional(Type.String()),
  include: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
});

export function registerResponsesRoutes(app: FastifyInstance, services: Services): void {
  registerModelEndpoint(app, services, responsesEndpoint);

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/responses/:id",
    summary: "Read a stored response by its `resp_…` id (the calling account's only).",
    tags: ["responses"],
    auth: "key",
    response: ResponseObject,
    async handler({ params, caller }) {
      return (await ownResponse(services, caller.accountId, params.id ?? "")).response;
    },
  });

  registerRoute(app, services, {
    method: "DELETE",
    path: "/v1/responses/:id",
    summary: "Delete a stored response; it can no longer be read or continued.",
    tags: ["responses"],
    auth: "key",
    response: Type.Object({
      id: Type.String(),
      object: Type.Literal("response"),
      deleted: Type.Literal(true),
    }),
    async handler({ params, caller }) {
      const id = params.id ?? "";
      if (!(await services.store.deleteResponse(caller.accountId, id)))
        throw new GatewayError("response_not_found", { id: id.slice(0, 200) });
      return { id, object: "response", deleted: true };
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/responses/:id/input_items",
    summary:
      "List the items that formed a stored response's input (a continued conversation's included), newest first unless `order=asc`.",
    tags: ["responses"],
    auth: "key",
    query: InputItemsQuery,
    async handler({ params, caller, query }) {
      const stored = await ownResponse(services, caller.accountId, params.id ?? "");
      const ordered = query.order === "asc" ? stored.inputItems : [...stored.inputItems].reverse();
      const after =
        query.after === undefined ? -1 : ordered.findIndex((item) => item.id === query.after);
      // An unknown cursor lists nothing, rather than starting over.
      const rest = query.after !== undefined && after === -1 ? [] : ordered.slice(after + 1);
      const data = rest.slice(0, query.limit ?? 20);
      return {
        object: "list",
        data,
        first_id: (data[0]?.id as string | undefined) ?? null,
        last_id: (data.at(-1)?.id as string | undefined) ?? null,
        has_more: rest.length > data.length,
      };
    },
  });
}
