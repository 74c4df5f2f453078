/**
 * @module providers/openai-images/openai-images-response
 * Reads OpenAI's images answer `{created, data:[{b64_json | url, revised_prompt}], background,
 * output_format, quality, size, usage}` into an `ImageResult`. DALL·E 2 answers carry no usage.
 */
import type { GeneratedImage, ImageResult, ImageTokenUsage } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import { isBase64Image } from "../kit/image-magic.ts";

interface ImagesAnswer {
  created?: unknown;
  data?: { b64_json?: unknown; url?: unknown; revised_prompt?: unknown }[];
  background?: unknown;
  output_format?: unknown;
  quality?: unknown;
  size?: unknown;
  usage?: {
    input_tokens?: unknown;
    output_tokens?: unknown;
    input_tokens_details?: { text_tokens?: unknown; image_tokens?: unknown };
  };
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export function readImageTokens(usage: ImagesAnswer["usage"]): ImageTokenUsage | undefined {
  const input = count(usage?.input_tokens);
  const output = count(usage?.output_tokens);
  if (input === undefined || output === undefined) return undefined;
  const imageTokens = count(usage?.input_tokens_details?.image_tokens) ?? 0;
  const textTokens = count(usage?.input_tokens_details?.text_tokens) ?? input - imageTokens;
  return { inputTokens: input, textTokens, imageTokens, outputTokens: output };
}

export function readImagesAnswer(raw: unknown): Omit<ImageResult, "warnings"> {
  const body: ImagesAnswer = typeof raw === "object" && raw !== null ? raw : {};
  const images: GeneratedImage[] = (Array.isArray(body.data) ? body.data : []).flatMap((item) => {
    const b64Json = text(item?.b64_json);
    const url = text(item?.url);
    if (!b64Json && !url) return [];
    // Bytes that are not an image are not delivered, nor billed, as one.
    if (b64Json && !isBase64Image(b64Json)) {
      throw new UpstreamError({
        kind: "protocol",
        message: "OpenAI answered b64_json that is not a PNG, JPEG, WebP or GIF image.",
      });
    }
    const revisedPrompt = text(item?.revised_prompt);
    return [
      {
        ...(b64Json ? { b64Json } : {}),
        ...(url ? { url } : {}),
        ...(revisedPrompt ? { revisedPrompt } : {}),
      },
    ];
  });
  if (images.length === 0) {
    throw new UpstreamError({
      kind: "protocol",
      message: "OpenAI answered without an image.",
      body,
    });
  }
  const tokens = readImageTokens(body.usage);
  const created = count(body.created);
  const echoed = {
    size: text(body.size),
    quality: text(body.quality),
    background: text(body.background),
    outputFormat: text(body.output_format),
  };
  return {
    images,
    ...(created !== undefined ? { created } : {}),
    ...Object.fromEntries(Object.entries(echoed).filter(([, value]) => value !== undefined)),
    ...(tokens ? { tokens } : {}),
  };
}
