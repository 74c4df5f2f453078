/**
 * @module endpoints/videos/plan-video
 * Turns a video request into what is billed and what the vendor receives, by the model's family:
 * - family A (`motion*`, DashScope Wan): `input` and `parameters` go to the vendor as sent, but for
 *   the tier field and the duration, added when `parameters` lacks them; the billed `duration`
 *   and `resolution` are the top-level fields (defaults 5 and `720p`), checked against the
 *   model's capabilities and against every tier `parameters` names (a null one is replaced by
 *   the billed value; one of the wrong type or an unknown `size` is refused), so the video
 *   generated is the video billed;
 * - family B (`gen-video*`, xAI): the vendor's body is built from `prompt` (optional with an
 *   image: a neutral motion prompt is sent then), `image` (an object `{url}` with an https or
 *   `data:image/` URL, required for image-only models), `duration`, `resolution` and
 *   `aspect_ratio`.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { CallWarning } from "../../spec/index.ts";
import type { VideoGenerationRequest } from "./schema.ts";

export interface VideoPlan {
  durationSeconds: number;
  resolution: string;
  aspectRatio: string;
  /** The vendor-shaped body, without `model`. */
  vendorBody: Record<string, unknown>;
  warnings: CallWarning[];
}

const DEFAULT_DURATION = 5;
const DEFAULT_ASPECT_RATIO = "16:9";

/** Wan 2.5/2.6 `size` values by resolution tier and aspect ratio (provider-protocols.md §3). */
const WAN_SIZES: Record<string, Record<string, string>> = {
  "480p": { "16:9": "832*480", "9:16": "480*832", "1:1": "624*624" },
  "720p": {
    "16:9": "1280*720",
    "9:16": "720*1280",
    "1:1": "960*960",
    "4:3": "1088*832",
    "3:4": "832*1088",
  },
  "1080p": {
    "16:9": "1920*1080",
    "9:16": "1080*1920",
    "1:1": "1440*1440",
    "4:3": "1632*1248",
    "3:4": "1248*1632",
  },
};
/** The tier of each Wan `size`. */
const SIZE_TIERS: Record<string, string> = Object.fromEntries(
  Object.entries(WAN_SIZES).flatMap(([tier, sizes]) =>
    Object.values(sizes).map((size) => [size, tier]),
  ),
);

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError("invalid_parameter", { detail }, { param });
}

function oneOf<T extends string | number>(
  param: string,
  value: T,
  allowed: readonly T[] | undefined,
  model: CatalogModel,
): T {
  if (allowed && !allowed.includes(value))
    throw invalid(
      param,
      `Invalid '${param}': ${model.id} takes ${allowed.join(", ")}; got ${JSON.stringify(value)}.`,
    );
  return value;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The `parameters` field the model's protocol reads the output tier from: Wan 2.5/2.6 text- and
 * reference-to-video read `size` (`1280*720`), their image-to-video and every 2.7 model read
 * `resolution` (`720P`). Without it the vendor makes 1080p, whatever is billed.
 */
function tierField(model: CatalogModel): "size" | "resolution" {
  const caps = model.capabilities;
  const sized = caps?.video_protocol === "2.5" || caps?.video_protocol === "2.6";
  return sized && caps?.video_input !== "i2v" ? "size" : "resolution";
}

/** The tiers `parameters` names (`resolution: "720P"`, a Wan `size`), each when present. */
function requestedTiers(parameters: Record<string, unknown> | undefined) {
  const resolution = parameters?.resolution;
  const size = parameters?.size;
  return {
    resolution: typeof resolution === "string" ? resolution.toLowerCase() : undefined,
    size: typeof size === "string" ? SIZE_TIERS[size] : undefined,
  };
}

/** The value of `field` that asks the vendor for `tier` in `aspectRatio`. */
function tierValue(field: "size" | "resolution", tier: string, aspectRatio: string): string {
  if (field === "resolution") return tier.toUpperCase();
  const sizes = WAN_SIZES[tier] ?? {};
  return sizes[aspectRatio] ?? sizes["16:9"] ?? tier;
}

/** The billed aspect ratio: the client's (one the model lists), else `16:9`. */
function aspectRatioOf(body: VideoGenerationRequest, model: CatalogModel): string {
  return oneOf(
    "aspect_ratio",
    body.aspect_ratio ?? DEFAULT_ASPECT_RATIO,
    model.capabilities?.aspect_ratios,
    model,
  );
}

function ignored(fields: string[], model: CatalogModel): CallWarning[] {
  return fields.map((setting) => ({
    type: "unsupported" as const,
    setting,
    details: `not used by ${model.family} models`,
  }));
}

/** The `parameters` fields that decide what is made, so what is billed, and their types. */
const BILLED_PARAMETERS = {
  duration: "number",
  resolution: "string",
  size: "string",
  ratio: "string",
};

/**
 * `parameters` with its billed fields checked: null is left out (the billed value is sent
 * instead), any other value must have the field's type, and a `size` must be a Wan size this
 * gateway knows the tier of. A value the checks let through unread would reach the vendor,
 * which makes what it reads (its default for null: 1080p, 5 s) at the price of what was billed.
 */
function billedParameters(
  parameters: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!parameters) return undefined;
  const checked = { ...parameters };
  for (const [name, type] of Object.entries(BILLED_PARAMETERS)) {
    const value = checked[name];
    if (value === null) delete checked[name];
    else if (value !== undefined && typeof value !== type)
      throw invalid(
        `parameters.${name}`,
        `Invalid 'parameters.${name}': expected a ${type}, got ${JSON.stringify(value)}.`,
      );
  }
  if (typeof checked.size === "string" && SIZE_TIERS[checked.size] === undefined)
    throw invalid(
      "parameters.size",
      `Invalid 'parameters.size': one of ${Object.keys(SIZE_TIERS).join(", ")}; got ${JSON.stringify(checked.size)}.`,
    );
  return checked;
}

function planFamilyA(body: VideoGenerationRequest, model: CatalogModel): VideoPlan {
  const caps = model.capabilities;
  const input = objectOf(body.input);
  if (!input) throw new GatewayError("missing_parameter", { param: "input" }, { param: "input" });
  const parameters = billedParameters(objectOf(body.parameters));
  const askedDuration = parameters?.duration;
  const duration = oneOf(
    "duration",
    body.duration ?? (typeof askedDuration === "number" ? askedDuration : DEFAULT_DURATION),
    caps?.durations,
    model,
  );
  if (typeof askedDuration === "number" && askedDuration !== duration)
    throw invalid(
      "parameters.duration",
      `parameters.duration (${askedDuration}) differs from duration (${duration}), which is what is billed; send the same value.`,
    );
  const field = tierField(model);
  const asked = requestedTiers(parameters);
  const fallback = caps?.resolutions?.includes("720p") ? "720p" : caps?.resolutions?.[0];
  const resolution = oneOf(
    "resolution",
    body.resolution ?? asked[field] ?? fallback ?? "720p",
    caps?.resolutions,
    model,
  );
  for (const tier of [asked.resolution, asked.size])
    if (tier !== undefined && tier !== resolution)
      throw invalid(
        "parameters",
        `The resolution in parameters (${tier}) differs from resolution (${resolution}), which is what is billed; send the same tier.`,
      );
  const aspectRatio = aspectRatioOf(body, model);
  // Wan 2.7 reads the frame's shape from `ratio` (default 16:9), unless an image gives it.
  const takesRatio = caps?.video_protocol === "2.7" && caps.video_input !== "i2v";
  const askedRatio = parameters?.ratio;
  if (takesRatio && askedRatio !== undefined && askedRatio !== aspectRatio)
    throw invalid(
      "parameters.ratio",
      `parameters.ratio (${String(askedRatio)}) differs from aspect_ratio (${aspectRatio}), which is what is billed; send the same value.`,
    );
  // What the vendor is not told it picks itself (1080p, 5 s, 16:9): ask for what is billed.
  const vendorParameters = {
    ...parameters,
    ...(parameters?.[field] === undefined
      ? { [field]: tierValue(field, resolution, aspectRatio) }
      : {}),
    ...(parameters?.duration === undefined ? { duration } : {}),
    ...(takesRatio && askedRatio === undefined ? { ratio: aspectRatio } : {}),
  };
  return {
    durationSeconds: duration,
    resolution,
    aspectRatio,
    vendorBody: { input: body.input, parameters: vendorParameters },
    warnings: ignored(
      ["prompt", "image"].filter((field) => (body as Record<string, unknown>)[field] !== undefined),
      model,
    ),
  };
}

/** What image-to-video asks for when the client gives no prompt (the vendor requires one). */
export const IMAGE_MOTION_PROMPT = "Animate this image with natural, subtle motion.";

/** The first frame: an https URL, as spec 2.6 says, or an inline `data:image/…` URI. */
function isImageUrl(value: string): boolean {
  if (value.startsWith("data:image/")) return true;
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.hostname !== "";
  } catch {
    return false;
  }
}

function planFamilyB(body: VideoGenerationRequest, model: CatalogModel): VideoPlan {
  const caps = model.capabilities;
  const imageOnly = caps?.video_input === "i2v";
  if (imageOnly && body.image === undefined)
    throw new GatewayError(
      "invalid_parameter",
      { detail: `${model.id} makes video from an image: 'image' ({"url": …}) is required.` },
      { param: "image" },
    );
  if (body.image !== undefined && !isImageUrl(body.image.url))
    throw invalid(
      "image.url",
      "Invalid 'image.url': an https URL of the first frame (or a data:image/… URI) is required.",
    );
  const promptless = body.prompt === undefined || body.prompt.trim() === "";
  if (body.image === undefined && promptless)
    throw new GatewayError("missing_parameter", { param: "prompt" }, { param: "prompt" });
  const duration = oneOf("duration", body.duration ?? DEFAULT_DURATION, caps?.durations, model);
  const resolution = oneOf("resolution", body.resolution ?? "720p", caps?.resolutions, model);
  const aspectRatio = aspectRatioOf(body, model);
  return {
    durationSeconds: duration,
    resolution,
    aspectRatio,
    vendorBody: {
      // Optional with an image (spec 2.6), required by the vendor: the picture, set in motion.
      prompt: promptless ? IMAGE_MOTION_PROMPT : body.prompt,
      ...(body.image === undefined ? {} : { image: { url: body.image.url } }),
      duration,
      resolution,
      // Image to video follows the picture's shape unless the client asked otherwise.
      ...(body.image === undefined || body.aspect_ratio !== undefined
        ? { aspect_ratio: aspectRatio }
        : {}),
    },
    warnings: ignored(
      ["input", "parameters"].filter(
        (field) => (body as Record<string, unknown>)[field] !== undefined,
      ),
      model,
    ),
  };
}

export function planVideo(body: VideoGenerationRequest, model: CatalogModel): VideoPlan {
  return model.family === "gen-video" ? planFamilyB(body, model) : planFamilyA(body, model);
}

/** Provider dialect (DashScope style) for family A and before the model is known. */
export function videoDialect(model: CatalogModel | undefined): "provider" | "gateway" {
  return model?.family === "gen-video" ? "gateway" : "provider";
}
