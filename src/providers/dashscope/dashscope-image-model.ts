/**
 * @module providers/dashscope/dashscope-image-model
 * Image adapter for Qwen-Image on DashScope's synchronous `multimodal-generation` endpoint:
 * one user message holding the reference images (`{image}`) and the prompt (`{text}`), the
 * parameters under `parameters` with sizes written `W*H`, and the finished image links read from
 * `output.choices[].message.content[].image`. The links are the vendor's (signed, 24 h) and are
 * handed on as they are, unless no client could fetch one (`kit/result-link.ts`). The whole
 * answer must arrive within the first-byte plus the idle timeout (a total deadline). DashScope
 * has no upload-based edit operation, so there is no `doEdit`.
 * Qwen-Image, -plus and -max make a fixed set of sizes: another size asked for is made at the
 * fixed size of the nearest aspect ratio, with a warning.
 */
import type {
  GeneratedImage,
  ImageGenerationOptions,
  ImageModel,
  ImageResult,
} from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { type HttpClient, headerValue } from "../kit/http-client.ts";
import { judgeResultLink } from "../kit/result-link.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import {
  type DashScopeErrorBody,
  dashScopeErrorFromBody,
  readDashScopeError,
} from "./dashscope-error.ts";

export const IMAGE_PATH = "/services/aigc/multimodal-generation/generation";

export interface DashScopeImageConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

/**
 * Qwen-Image, -plus and -max (not 2.0, not the edit models) make only these sizes; any other is
 * refused with 400 InvalidParameter. The older 4:3 pair is accepted as well.
 */
const FIXED_SIZE_MODEL = /^qwen-image(-plus|-max)?(-\d{4}-\d{2}-\d{2})?$/;
const FIXED_SIZES = [
  [1328, 1328],
  [1664, 928],
  [928, 1664],
  [1472, 1104],
  [1104, 1472],
  [1472, 1140],
  [1140, 1472],
] as const;

/**
 * The size sent for `W*H`: as asked, or for a fixed-size model the fixed size of the nearest
 * aspect ratio (`1024*1024` is made at `1328*1328`, `1280*720` at `1664*928`).
 */
export function upstreamImageSize(
  upstreamModel: string,
  size: { width: number; height: number },
): { width: number; height: number } {
  if (!FIXED_SIZE_MODEL.test(upstreamModel)) return size;
  if (FIXED_SIZES.some(([width, height]) => width === size.width && height === size.height))
    return size;
  const aspect = Math.log(size.width / size.height);
  let best: readonly [number, number] = FIXED_SIZES[0];
  for (const candidate of FIXED_SIZES) {
    if (
      Math.abs(Math.log(candidate[0] / candidate[1]) - aspect) <
      Math.abs(Math.log(best[0] / best[1]) - aspect)
    )
      best = candidate;
  }
  return { width: best[0], height: best[1] };
}

/** The native request body. */
export function buildImageRequest(options: ImageGenerationOptions): Record<string, unknown> {
  const content = [
    ...(options.referenceUrls ?? []).map((image) => ({ image })),
    { text: options.prompt },
  ];
  const asked = options.size && options.size !== "auto" ? options.size : undefined;
  const size = asked && upstreamImageSize(options.upstreamModel, asked);
  const parameters: Record<string, unknown> = {
    ...(size ? { size: `${size.width}*${size.height}` } : {}),
    n: options.n,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.watermark !== undefined ? { watermark: options.watermark } : {}),
    ...(options.negativePrompt !== undefined ? { negative_prompt: options.negativePrompt } : {}),
    ...(options.promptExtend !== undefined ? { prompt_extend: options.promptExtend } : {}),
  };
  return {
    model: options.upstreamModel,
    input: { messages: [{ role: "user", content }] },
    parameters,
  };
}

interface ImageAnswer extends DashScopeErrorBody {
  output?: {
    choices?: { message?: { content?: { image?: unknown }[] } }[];
  };
  usage?: { width?: unknown; height?: unknown; image_count?: unknown };
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * A link a client can fetch: an `http(s)` URL (not an error text in the link's place), not to a
 * link-local or cloud metadata address.
 */
function isImageLink(value: unknown): value is string {
  return typeof value === "string" && value !== "" && judgeResultLink(value) === "ok";
}

/** Reads the answer; an answer without any image link is a protocol error. */
export function readImageAnswer(body: ImageAnswer): Omit<ImageResult, "warnings"> {
  if (typeof body.code === "string" && body.code !== "" && body.output === undefined) {
    throw dashScopeErrorFromBody(body);
  }
  const images: GeneratedImage[] = (body.output?.choices ?? []).flatMap((choice) =>
    (choice.message?.content ?? []).flatMap((part) =>
      isImageLink(part.image) ? [{ url: part.image }] : [],
    ),
  );
  if (images.length === 0) {
    throw new UpstreamError({
      kind: "protocol",
      message: "DashScope answered without an image link a client can fetch.",
      body,
      upstreamRequestId: body.request_id,
    });
  }
  const width = positive(body.usage?.width);
  const height = positive(body.usage?.height);
  return {
    images,
    ...(width !== undefined ? { width } : {}),
    ...(height !== undefined ? { height } : {}),
    ...(typeof body.request_id === "string" ? { upstreamRequestId: body.request_id } : {}),
  };
}

export class DashScopeImageModel implements ImageModel {
  readonly specificationVersion = "switchyard-image-1" as const;
  readonly provider: string;
  readonly #config: DashScopeImageConfig;

  constructor(config: DashScopeImageConfig) {
    this.#config = config;
    this.provider = config.provider ?? "dashscope";
  }

  async doGenerate(options: ImageGenerationOptions): Promise<ImageResult> {
    const response = await postUpstream(this.#config.http, `${this.#config.baseUrl}${IMAGE_PATH}`, {
      headers: {
        authorization: `Bearer ${this.#config.apiKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(buildImageRequest(options)),
      signal: options.abortSignal,
      totalDeadline: true,
      readError: readDashScopeError,
    });
    const result = await readJsonObject(response, options.abortSignal, (body) =>
      readImageAnswer(body as ImageAnswer),
    );
    const warnings: ImageResult["warnings"] = [];
    for (const [setting, value] of [
      ["quality", options.quality],
      ["background", options.background],
      ["output_format", options.outputFormat],
    ] as const) {
      if (value !== undefined) warnings.push({ type: "unsupported", setting });
    }
    const asked = options.size && options.size !== "auto" ? options.size : undefined;
    const made = asked && upstreamImageSize(options.upstreamModel, asked);
    if (asked && made && made !== asked)
      warnings.push({
        type: "compatibility",
        setting: "size",
        details: `${options.upstreamModel} makes fixed sizes only; ${asked.width}*${asked.height} was made at ${made.width}*${made.height}`,
      });
    return {
      ...result,
      upstreamRequestId: result.upstreamRequestId ?? headerValue(response.headers, "x-request-id"),
      warnings,
    };
  }
}
