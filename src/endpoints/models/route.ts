/**
 * @module endpoints/models/route
 * `GET /v1/models` and `GET /v1/models/{id}`: the catalog as the calling key sees it. OpenAI list
 * shape with Switchyard's extra fields; Anthropic list shape when `anthropic-version` is sent.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { type CatalogModel, isModelAllowed } from "../../catalog/index.ts";
import { unavailableReason } from "../../core/model-availability.ts";
import { modelNotFound } from "../../core/model-not-found.ts";
import type { Services } from "../../core/services.ts";
import { registerRoute } from "../../http/route.ts";

/** Why a model cannot be served (see `core/model-availability.ts`), or `undefined`. */
export type Unavailability = (model: CatalogModel) => { code: string; message: string } | undefined;

export function toOpenAIModel(model: CatalogModel, unavailable: Unavailability) {
  const reason = unavailable(model);
  return {
    id: model.id,
    object: "model",
    created: model.created ?? 0,
    owned_by: model.owned_by,
    display_name: model.display_name,
    endpoint: model.endpoint,
    family: model.family,
    aliases: model.aliases ?? [],
    capabilities: model.capabilities ?? {},
    pricing: model.pricing,
    available: reason === undefined,
    ...(reason ? { unavailable_reason: reason } : {}),
  };
}

function toAnthropicModel(model: CatalogModel) {
  return {
    id: model.id,
    type: "model",
    display_name: model.display_name,
    created_at: new Date((model.created ?? 0) * 1000).toISOString(),
  };
}

const ModelObject = Type.Object({
  id: Type.String(),
  object: Type.Literal("model"),
  created: Type.Integer(),
  owned_by: Type.String(),
  display_name: Type.String(),
  endpoint: Type.String({
    description: "chat, image-generation, image-edit, video, embedding or speech.",
  }),
  family: Type.String(),
  capabilities: Type.Record(Type.String(), Type.Unknown()),
  pricing: Type.Record(Type.String(), Type.Unknown(), {
    description: "Integer micro-USD prices with the unit in the key.",
  }),
  available: Type.Boolean({ description: "Whether a request for the model can be served." }),
  unavailable_reason: Type.Optional(
    Type.Object(
      { code: Type.String(), message: Type.String() },
      {
        description:
          "Present when `available` is false: the error code a request answers (`vendor_not_configured`, `provider_not_configured`) and its message.",
      },
    ),
  ),
});

export function registerModelRoutes(app: FastifyInstance, services: Services): void {
  const unavailable: Unavailability = (model) => unavailableReason(model, services);
  registerRoute(app, services, {
    method: "GET",
    path: "/v1/models",
    summary:
      "List the models the calling key may use (a login session, as the web console reads it, sees every model).",
    tags: ["models"],
    auth: "account",
    response: Type.Object({ object: Type.Literal("list"), data: Type.Array(ModelObject) }),
    async handler({ caller, request }) {
      const models = services.catalog.listAllowed(caller.key?.models ?? []);
      if (request.headers["anthropic-version"] !== undefined) {
        const data = models.filter((model) => model.endpoint === "chat").map(toAnthropicModel);
        return {
          data,
          has_more: false,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
        };
      }
      return { object: "list", data: models.map((model) => toOpenAIModel(model, unavailable)) };
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/models/:id",
    summary: "Describe one model.",
    tags: ["models"],
    auth: "account",
    response: ModelObject,
    async handler({ caller, params, request }) {
      const model = services.catalog.get(params.id ?? "");
      if (!model || !isModelAllowed(caller.key?.models ?? [], model.id)) {
        throw modelNotFound(services.catalog, {
          requested: params.id ?? "",
          allowlist: caller.key?.models ?? [],
        });
      }
      return request.headers["anthropic-version"] !== undefined
        ? toAnthropicModel(model)
        : toOpenAIModel(model, unavailable);
    },
  });
}
