/**
 * @module endpoints/images/routes
 * `POST /v1/images/generations` and `POST /v1/images/edits`: the endpoint declarations.
 *
 * Generations serve two catalog kinds, and the model's catalog `family` picks the protocol (never
 * the body's shape): `pictor` → the DashScope body of spec 2.3, answered in the provider dialect;
 * `imgmodel` and `legacy-img` (kind `image-edit`, which also generate) → the OpenAI images body,
 * answered in the gateway dialect. Edits take `multipart/form-data`, read as a stream with
 * limits by a parser that only this route has (an encapsulated Fastify context).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CatalogModel } from "../../catalog/index.ts";
import type { ModelEndpoint } from "../../core/operation.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { registerModelEndpoint } from "../../http/model-endpoint.ts";
import { checkEdit, runImageEdit } from "./edits.ts";
import { estimateImageCost } from "./image-cost.ts";
import { readImageForm } from "./multipart-form.ts";
import { openAIJob, runOpenAIGeneration, validateOpenAIGeneration } from "./openai-images.ts";
import { pictorJob, runPictor, validatePictor } from "./pictor.ts";
import {
  ImageEditRequest,
  ImageGenerationBody,
  ImageGenerationResponse,
  ImagesResponse,
} from "./schema.ts";

/** Catalog family → request protocol on `/v1/images/generations`. */
const GENERATION_PROTOCOLS: Record<string, "dashscope" | "openai"> = {
  pictor: "dashscope",
  imgmodel: "openai",
  "legacy-img": "openai",
};

function parseGeneration(body: ImageGenerationBody, model: CatalogModel) {
  const protocol = GENERATION_PROTOCOLS[model.family];
  if (protocol === "dashscope") return { protocol, body: validatePictor(body, model) } as const;
  if (protocol === "openai") return { protocol, ...validateOpenAIGeneration(body, model) } as const;
  throw new GatewayError(
    "endpoint_model_mismatch",
    { model: model.id, actual: model.endpoint, path: "/v1/images/generations" },
    { param: "model" },
  );
}

export const imageGenerationsEndpoint: ModelEndpoint<typeof ImageGenerationBody> = {
  method: "POST",
  path: "/v1/images/generations",
  summary:
    "Generate images. `pictor-*` take the DashScope body (spec 2.3) and answer image links; `imgmodel-*` and `legacy-img-2` take the OpenAI images body.",
  tags: ["images"],
  kinds: ["image-generation", "image-edit"],
  body: ImageGenerationBody,
  response: ImageGenerationResponse,
  // `pictor` answers in DashScope's dialect; so does anything failing before the model is known
  // (an unknown model, an unreadable body), as spec 7 shows for `pictor` requests.
  dialect: (model) =>
    model === undefined || GENERATION_PROTOCOLS[model.family] === "dashscope"
      ? "provider"
      : "gateway",
  validateForModel(body, model) {
    parseGeneration(body, model);
  },
  async estimateCost(body, model) {
    const parsed = parseGeneration(body, model);
    return estimateImageCost(
      model,
      parsed.protocol === "dashscope"
        ? pictorJob(parsed.body)
        : openAIJob(parsed.body, parsed.options),
    );
  },
  run(body, context) {
    const parsed = parseGeneration(body, context.model);
    return parsed.protocol === "dashscope"
      ? runPictor(parsed.body, context)
      : runOpenAIGeneration(parsed.body, parsed.options, context);
  },
};

export const imageEditsEndpoint: ModelEndpoint<typeof ImageEditRequest> = {
  method: "POST",
  path: "/v1/images/edits",
  summary: "Edit images (multipart/form-data, spec 2.4): `imgmodel-*`, `legacy-img-2`.",
  tags: ["images"],
  kinds: ["image-edit"],
  body: ImageEditRequest,
  bodyContentType: "multipart/form-data",
  response: ImagesResponse,
  dialect: "gateway",
  validateForModel(body, model) {
    checkEdit(body, model);
  },
  async estimateCost(body, model) {
    const checked = checkEdit(body, model);
    return estimateImageCost(model, openAIJob(body, checked.options, checked.images));
  },
  run: runImageEdit,
};

/**
 * Registers `/v1/images/edits` in its own context, the only one that reads multipart bodies.
 * A refused upload is answered at once while the rest of it is read and dropped (see
 * `multipart-form.ts`); Fastify would mark that answer `Connection: close`, and closing while
 * the client still sends makes it lose the answer, so the connection stays open instead.
 */
export function registerImageEditRoutes(app: FastifyInstance, services: Services): void {
  const draining = new WeakSet<FastifyRequest>();
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("multipart/form-data", (request, payload, done) => {
      readImageForm(request.headers, payload).then(
        (form) => done(null, form),
        (error: Error) => {
          draining.add(request);
          done(error, undefined);
        },
      );
    });
    scope.addHook("onSend", async (request, reply) => {
      if (draining.has(request)) reply.removeHeader("connection");
    });
    scope.addContentTypeParser("*", (request, _payload, done) => {
      const contentType = request.headers["content-type"] ?? "(none)";
      const message = `Unsupported Content-Type '${contentType}'. Send multipart/form-data.`;
      done(new GatewayError("unsupported_media_type", { contentType }, { message }), undefined);
    });
    registerModelEndpoint(scope, services, imageEditsEndpoint);
  });
}
