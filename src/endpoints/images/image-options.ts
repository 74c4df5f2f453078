/**
 * @module endpoints/images/image-options
 * The OpenAI-images rules per model, shared by generations and edits, from the catalog entry:
 * sizes (`capabilities.sizes`, plus free-form sizes where `free_form_size` is set, on
 * generations only), qualities (`standard`/`hd` mapped to the model's native values), output
 * format and background (GPT-image options: `imgmodel` family only), and `response_format`
 * (`url` honoured only by the `legacy-img` family; others always answer base64).
 */
import type { CatalogModel } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { CallWarning, ImageCallCommon, ImageFormat, ImageSize } from "../../spec/index.ts";
import type { OpenAIImageRequest } from "./schema.ts";

/** Families whose vendor still serves links (DALL·E 2); everyone else answers base64. */
const URL_FAMILIES = new Set(["legacy-img"]);
/** Families that take GPT-image options (`output_format`, `background`, `moderation`, ...). */
const GPT_FAMILIES = new Set(["imgmodel"]);

export const takesGptOptions = (model: CatalogModel) => GPT_FAMILIES.has(model.family);
export const servesUrls = (model: CatalogModel) => URL_FAMILIES.has(model.family);

export type OpenAIOptions = Pick<
  OpenAIImageRequest,
  | "size"
  | "quality"
  | "background"
  | "output_format"
  | "output_compression"
  | "response_format"
  | "user"
>;

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError("invalid_parameter", { detail }, { param });
}

export function parseSize(size: string): ImageSize | undefined {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

/** Free-form rule of spec 4.3: multiples of 16, at most 3840 px a side, ratio at most 3:1. */
export function freeFormProblem(size: ImageSize): string | undefined {
  const { width, height } = size;
  if (width < 16 || height < 16 || width % 16 !== 0 || height % 16 !== 0)
    return "width and height must be multiples of 16";
  if (Math.max(width, height) > 3840) return "each side must be at most 3840 px";
  if (Math.max(width, height) / Math.min(width, height) > 3)
    return "the long side must be at most 3 times the short side";
  return undefined;
}

/** The size to send: `auto`, a listed size, or (generations of free-form models) any valid one. */
export function resolveSize(
  model: CatalogModel,
  size: string | undefined,
  operation: "generation" | "edit",
): ImageSize | "auto" | undefined {
  const listed = (model.capabilities?.sizes ?? []).filter((item) => item !== "auto");
  if (size === undefined || size === "auto") {
    // Models without `auto` (DALL·E 2) get their own default by sending nothing.
    return model.capabilities?.sizes?.includes("auto") ? "auto" : undefined;
  }
  const parsed = parseSize(size);
  if (parsed && listed.includes(size)) return parsed;
  const freeForm = operation === "generation" && model.capabilities?.free_form_size === true;
  const problem = parsed && freeForm ? freeFormProblem(parsed) : undefined;
  if (parsed && freeForm && problem === undefined) return parsed;
  const options = ["auto", ...listed].join(", ");
  const rule = freeForm ? `, or WxH (${problem ?? "e.g. 1536x864"})` : "";
  throw new GatewayError(
    "unsupported_size",
    { size, model: model.id, allowed: `${options}${rule}` },
    { param: "size" },
  );
}

/** `standard`/`hd` to the model's native quality; a quality the model lacks is refused. */
export function resolveQuality(
  model: CatalogModel,
  quality: string | undefined,
): string | undefined {
  const native = model.capabilities?.qualities ?? [];
  if (quality === undefined) return undefined;
  const tiered = native.includes("medium") && native.includes("high");
  const mapped = tiered
    ? (({ standard: "medium", hd: "high" } as Record<string, string>)[quality] ?? quality)
    : ["standard", "hd", "auto"].includes(quality) && native.includes("standard")
      ? "standard"
      : quality;
  if (mapped === "auto" && !native.includes("auto")) return undefined;
  if (!native.includes(mapped)) {
    throw invalid(
      "quality",
      `Invalid 'quality': '${quality}' is not available for ${model.id} (its qualities: ${native.join(", ")}).`,
    );
  }
  return mapped;
}

export interface ResolvedOptions {
  common: Omit<ImageCallCommon, "upstreamModel" | "prompt" | "n" | "abortSignal">;
  /** The format of the output (what the client gets). */
  outputFormat: ImageFormat;
  warnings: CallWarning[];
}

/** Checks and maps the OpenAI options of a request for this model. */
export function resolveOpenAIOptions(
  model: CatalogModel,
  body: OpenAIOptions,
  operation: "generation" | "edit",
): ResolvedOptions {
  const gpt = takesGptOptions(model);
  const formats = model.capabilities?.output_formats ?? ["png"];
  const warnings: CallWarning[] = [];
  if (!gpt) {
    for (const name of ["background", "output_compression"] as const) {
      const value = body[name];
      if (value !== undefined && value !== "auto")
        throw invalid(name, `Invalid '${name}': ${model.id} does not take this setting.`);
    }
  }
  const outputFormat = body.output_format ?? "png";
  if (!formats.includes(outputFormat)) {
    throw invalid(
      "output_format",
      `Invalid 'output_format': ${model.id} answers ${formats.join(", ")} only.`,
    );
  }
  if (body.background === "transparent" && outputFormat === "jpeg") {
    throw invalid(
      "background",
      "Invalid 'background': 'transparent' needs output_format 'png' or 'webp'.",
    );
  }
  let responseFormat: "url" | "b64_json" | undefined;
  if (servesUrls(model)) responseFormat = body.response_format ?? "b64_json";
  else if (body.response_format === "url") {
    warnings.push({
      type: "unsupported",
      setting: "response_format",
      details: `${model.id} always answers b64_json`,
    });
  }
  const common: ResolvedOptions["common"] = {
    size: resolveSize(model, body.size, operation),
    quality: resolveQuality(model, body.quality),
    ...(responseFormat ? { responseFormat } : {}),
    ...(body.user !== undefined ? { user: body.user } : {}),
    ...(gpt && body.background !== undefined ? { background: body.background } : {}),
    ...(gpt && body.output_format !== undefined ? { outputFormat: body.output_format } : {}),
    ...(gpt && body.output_compression !== undefined
      ? { outputCompression: body.output_compression }
      : {}),
  };
  return { common, outputFormat, warnings };
}
