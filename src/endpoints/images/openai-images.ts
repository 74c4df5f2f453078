/**
 * @module endpoints/images/openai-images
 * The OpenAI-images families (`imgmodel`, `legacy-img`) on `/v1/images/generations`: the body's
 * rules (gateway dialect), the call through the `openai-images` adapter, and the response in
 * OpenAI's shape, which `/v1/images/edits` shares: `created`, `data[]` (`b64_json`, or `url`
 * for `legacy-img`), the echoed settings and, for token-priced models, `usage`.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { compileValidator } from "../../core/validate.ts";
import type { CallWarning, ImageResult, ImageSize, ImageTokenUsage } from "../../spec/index.ts";
import { callImageModel } from "./image-call.ts";
import {
  countImageTokens,
  type ImageJob,
  settleImageUsage,
  toOpenAIImageUsage,
} from "./image-cost.ts";
import {
  freeFormProblem,
  parseSize,
  type ResolvedOptions,
  resolveOpenAIOptions,
  takesGptOptions,
} from "./image-options.ts";
import { OpenAIImageRequest } from "./schema.ts";

const validateSchema = compileValidator(OpenAIImageRequest, { nullMeansAbsent: true });

const DEFAULT_SIZE: ImageSize = { width: 1024, height: 1024 };
/** The quality of GPT-image's token table used to count pictures of models priced per picture. */
const UNPRICED_TOKEN_QUALITY = "medium";

/** Checks an OpenAI images body for the model; the mapped options come with it. */
export function validateOpenAIGeneration(
  raw: unknown,
  model: CatalogModel,
): { body: OpenAIImageRequest; options: ResolvedOptions } {
  const body = validateSchema(raw);
  return { body, options: resolveOpenAIOptions(model, body, "generation") };
}

export function openAIJob(
  body: { prompt: string; n?: number },
  options: ResolvedOptions,
  inputs?: ImageSize[],
): ImageJob {
  return {
    prompt: body.prompt,
    n: body.n ?? 1,
    size: options.common.size,
    quality: options.common.quality,
    sizeSeparator: "x",
    ...(inputs ? { inputs } : {}),
  };
}

/**
 * The size of the pictures: the vendor's echo, else what was asked, else the model default. An
 * echo is taken only when it is a size the model can make (one it lists, or a valid free-form
 * size): a "0x0" would price the pictures' output at nothing.
 */
function outputSize(
  result: ImageResult,
  options: ResolvedOptions,
  model: CatalogModel,
): ImageSize | undefined {
  const echoed = result.size ? parseSize(result.size) : undefined;
  const possible =
    echoed !== undefined &&
    ((model.capabilities?.sizes ?? []).includes(result.size ?? "") ||
      freeFormProblem(echoed) === undefined);
  if (echoed && possible) return echoed;
  if (typeof options.common.size === "object") return options.common.size;
  return options.common.size === "auto" ? undefined : { width: 1024, height: 1024 };
}

/**
 * The OpenAI-shaped body of a finished generation or edit. An edit carries every field of spec
 * 2.4 whatever the family: the vendor's values where it gave them, else the request's, else the
 * defaults the model works with (docs/images.md says which are computed). A generation by a
 * DALL·E-style model answers just the pictures, as that vendor does.
 */
export function buildImagesBody(
  context: OperationContext,
  result: ImageResult,
  options: ResolvedOptions,
  tokens: ImageTokenUsage | undefined,
  size: ImageSize | undefined,
) {
  const data = result.images.map((image) =>
    image.b64Json ? { b64_json: image.b64Json } : { url: image.url ?? "" },
  );
  const created = result.created ?? Math.floor(context.services.now() / 1000);
  const gpt = takesGptOptions(context.model);
  if (!tokens) return { created, data };
  return {
    created,
    data,
    background: result.background ?? options.common.background ?? "opaque",
    output_format: result.outputFormat ?? options.outputFormat,
    quality: result.quality ?? options.common.quality ?? (gpt ? "auto" : "standard"),
    size: result.size ?? (size ? `${size.width}x${size.height}` : "auto"),
    usage: toOpenAIImageUsage(tokens),
  };
}

/** Settles the call and builds the response (shared with edits). */
export async function finishImages(
  context: OperationContext,
  job: ImageJob,
  result: ImageResult,
  options: ResolvedOptions,
  operation: "generation" | "edit",
): Promise<OperationResult> {
  const size = outputSize(result, options, context.model);
  const { usage, tokens } = await settleImageUsage(context.model, job, result, size);
  // An edit by a model priced per picture shows the gateway's own token count (spec 2.4).
  const shownTokens =
    tokens ??
    (operation === "generation"
      ? undefined
      : await countImageTokens(
          job,
          result.images.length,
          size ?? DEFAULT_SIZE,
          UNPRICED_TOKEN_QUALITY,
        ));
  const warnings: CallWarning[] = [...options.warnings, ...result.warnings];
  return {
    kind: "json",
    body: buildImagesBody(context, result, options, shownTokens, size),
    usage,
    settleDetails: { upstreamRequestId: result.upstreamRequestId },
    warnings,
  };
}

export async function runOpenAIGeneration(
  body: OpenAIImageRequest,
  options: ResolvedOptions,
  context: OperationContext,
): Promise<OperationResult> {
  const job = openAIJob(body, options);
  // A size the model does not list is free-form: a route may send it to another of the vendor's
  // models (gpt-image-1.5 makes only the listed sizes, gpt-image-2 any).
  const freeForm =
    body.size !== undefined &&
    body.size !== "auto" &&
    !(context.model.capabilities?.sizes ?? []).includes(body.size);
  const result = await callImageModel(context, job.n, (model, route) =>
    model.doGenerate({
      ...options.common,
      upstreamModel: (freeForm && route.freeFormUpstreamModel) || route.upstreamModel,
      prompt: body.prompt,
      n: job.n,
      ...(body.moderation !== undefined && takesGptOptions(context.model)
        ? { moderation: body.moderation }
        : {}),
      abortSignal: context.signal,
    }),
  );
  return finishImages(context, job, result, options, "generation");
}
