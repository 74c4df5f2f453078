/**
 * @module sandbox/dashscope-image
 * Qwen-Image (`qwen-image*`) on the sandbox's multimodal-generation endpoint. Validates like the
 * vendor (one user message, one text item, images by model, `W*H` sizes, `n` rules), answers
 * `output.choices[0].message.content[].image` links to the result host (valid 24 h) with
 * `usage{width,height,image_count}`. Reference images are not downloaded: a link to a host
 * under `.invalid` fails as an unreachable one does. Faults: `code=<Code>` (e.g.
 * `DataInspectionFailed`, `InvalidParameter.DataInspection`), `no-usage`, `drop`, `malformed`.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  dashScopeError,
  INVALID_PARAMETER_MESSAGE,
  sendDashScopeError,
} from "./dashscope-errors.ts";
import type { MultimodalContext, MultimodalHandler } from "./dashscope-multimodal.ts";
import { stableHash } from "./deterministic-text.ts";
import { DASHSCOPE_RESULT_TTL_SECONDS, signResultUrl } from "./image-results.ts";
import { sendEmbedBody } from "./request-faults.ts";
import { requestOrigin } from "./signed-links.ts";

/** The message DashScope sends with each code the `code=` fault may ask for. */
const CODE_MESSAGES: Record<string, string> = {
  InvalidParameter: INVALID_PARAMETER_MESSAGE,
  DataInspectionFailed: "Input data may contain inappropriate content.",
  "InvalidParameter.DataInspection":
    "Download the media resource timed out during the data inspection process.",
  "Throttling.RateQuota": "Requests rate limit exceeded, please try again later.",
  "Throttling.AllocationQuota": "Allocated quota exceeded, please increase your quota limit.",
  InternalError:
    "An internal error has occured, please try again later or contact service support.",
};

export function statusForCode(code: string): number {
  if (code.startsWith("Throttling")) return 429;
  if (code.startsWith("InternalError")) return 500;
  if (code === "InvalidApiKey") return 401;
  if (code.startsWith("AccessDenied")) return 403;
  return 400;
}

class Invalid extends Error {}

interface ImageRequest {
  text: string;
  images: string[];
  width: number;
  height: number;
  n: number;
  seed: number | undefined;
  negative: string;
}

const isEditModel = (model: string) => model.startsWith("qwen-image-edit");
const isVersion2 = (model: string) => model.startsWith("qwen-image-2.0");

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function readContent(input: unknown): { texts: string[]; images: string[] } {
  const messages = record(input)?.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw new Invalid('Either "prompt" or "messages" must exist and cannot both be none');
  if (messages.length !== 1) throw new Invalid("Only one message is supported in messages.");
  const message = record(messages[0]);
  if (message?.role !== "user") throw new Invalid("The role of the message must be user.");
  if (!Array.isArray(message.content)) throw new Invalid("The content of the message is invalid.");
  const texts: string[] = [];
  const images: string[] = [];
  for (const item of message.content) {
    const part = record(item) ?? {};
    const keys = Object.keys(part).filter((key) => key === "text" || key === "image");
    if (keys.length !== 1) throw new Invalid("Each content item must hold either text or image.");
    if (typeof part.text === "string") texts.push(part.text);
    else if (typeof part.image === "string") images.push(part.image);
    else throw new Invalid("The content item value must be a string.");
  }
  return { texts, images };
}

function checkImageUrl(url: string): void {
  if (url.startsWith("data:image/")) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Invalid("url error, please check url！");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new Invalid("url error, please check url！");
  if (parsed.hostname.endsWith(".invalid"))
    throw new Invalid(
      "<400> InternalError.Algo.InvalidParameter: Failed to download multimodal content",
    );
}

/** The sizes Qwen-Image, -plus and -max make (the older 4:3 pair included). */
const FIXED_SIZES = new Set([
  "1664*928",
  "1472*1104",
  "1472*1140",
  "1328*1328",
  "1104*1472",
  "1140*1472",
  "928*1664",
]);

/**
 * The vendor's size rules: 2.0 models any size of 512×512 to 2048×2048 pixels in all, the edit
 * models sides of 512 to 2048, the others their fixed set.
 */
function sizeAllowed(model: string, width: number, height: number): boolean {
  if (isVersion2(model)) {
    const pixels = width * height;
    return pixels >= 512 * 512 && pixels <= 2048 * 2048;
  }
  if (isEditModel(model)) return width >= 512 && height >= 512 && width <= 2048 && height <= 2048;
  return FIXED_SIZES.has(`${width}*${height}`);
}

export function parseImageRequest(model: string, body: Record<string, unknown>): ImageRequest {
  const { texts, images } = readContent(body.input);
  if (texts.length !== 1 || texts[0]?.trim() === "")
    throw new Invalid("Exactly one non-empty text item is required in content.");
  const text = texts[0] ?? "";
  if (text.length > 800) throw new Invalid("The prompt is too long, at most 800 characters.");
  const [minImages, maxImages] = isEditModel(model) ? [1, 3] : isVersion2(model) ? [0, 3] : [0, 0];
  if (images.length < minImages || images.length > maxImages) {
    throw new Invalid(
      `The model ${model} takes ${minImages} to ${maxImages} images, got ${images.length}.`,
    );
  }
  images.forEach(checkImageUrl);
  const parameters = record(body.parameters) ?? {};
  const size =
    parameters.size ?? (isEditModel(model) || isVersion2(model) ? "1024*1024" : "1328*1328");
  const match = typeof size === "string" ? /^(\d{3,4})\*(\d{3,4})$/.exec(size) : null;
  const [width, height] = [Number(match?.[1]), Number(match?.[2])];
  if (!match || !sizeAllowed(model, width, height))
    throw new Invalid(`The size ${String(size)} is not supported by ${model}.`);
  const n = parameters.n ?? 1;
  const maxN = isVersion2(model) || model === "qwen-image-edit-plus" ? 6 : 1;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > maxN)
    throw new Invalid(`The parameter n must be an integer between 1 and ${maxN}.`);
  if (model === "qwen-image-edit-plus" && parameters.size !== undefined && n > 1)
    throw new Invalid("The parameter size is only allowed when n is 1.");
  const seed = parameters.seed;
  if (
    seed !== undefined &&
    (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 2147483647)
  )
    throw new Invalid("The parameter seed must be an integer in [0, 2147483647].");
  const negative = parameters.negative_prompt ?? "";
  if (typeof negative !== "string" || negative.length > 500)
    throw new Invalid("The parameter negative_prompt must be a string of at most 500 characters.");
  for (const flag of ["watermark", "prompt_extend"]) {
    if (parameters[flag] !== undefined && typeof parameters[flag] !== "boolean")
      throw new Invalid(`The parameter ${flag} must be a boolean.`);
  }
  return { text, images, width, height, n, seed, negative };
}

async function handleImage(
  request: FastifyRequest,
  reply: FastifyReply,
  context: MultimodalContext,
): Promise<FastifyReply | undefined> {
  const { fault, requestId, model } = context;
  if (fault.code) {
    const message = CODE_MESSAGES[fault.code] ?? `Sandbox fault ${fault.code}.`;
    const status = statusForCode(fault.code);
    const headers: Record<string, string> =
      fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter };
    return sendDashScopeError(
      reply,
      status,
      dashScopeError(fault.code, message, requestId),
      headers,
    );
  }
  let parsed: ImageRequest;
  try {
    parsed = parseImageRequest(model, context.body);
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return sendDashScopeError(
      reply,
      400,
      dashScopeError("InvalidParameter", error.message, requestId),
    );
  }
  const origin = requestOrigin(request);
  const content = Array.from({ length: parsed.n }, (_, index) => {
    const seed = stableHash(
      [
        model,
        parsed.text,
        parsed.negative,
        String(parsed.seed ?? ""),
        parsed.images.join(" "),
        index,
      ].join("\n"),
    );
    const picture = { width: parsed.width, height: parsed.height, seed, format: "png" as const };
    const { links } = context.state;
    return { image: signResultUrl(origin, picture, DASHSCOPE_RESULT_TTL_SECONDS, links) };
  });
  const body = {
    output: {
      choices: [{ finish_reason: "stop", message: { role: "assistant", content } }],
    },
    ...(fault.noUsage
      ? {}
      : { usage: { width: parsed.width, height: parsed.height, image_count: parsed.n } }),
    request_id: requestId,
  };
  return sendEmbedBody(reply, context.state, fault, body);
}

/** The Qwen-Image models DashScope serves, each also as a dated snapshot (`…-2025-12-30`). */
const QWEN_IMAGE_MODELS = new Set([
  "qwen-image",
  "qwen-image-plus",
  "qwen-image-max",
  "qwen-image-edit",
  "qwen-image-edit-plus",
  "qwen-image-edit-max",
  "qwen-image-2.0",
  "qwen-image-2.0-pro",
]);

export const imageHandler: MultimodalHandler = {
  // Another `qwen-image…` name is DashScope's "Model not exist.", as any unknown model.
  serves: (model) => QWEN_IMAGE_MODELS.has(model.replace(/-\d{4}-\d{2}-\d{2}$/, "")),
  handle: handleImage,
};
