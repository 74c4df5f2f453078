/**
 * @module providers/openai-images/openai-images-model
 * Image adapter for OpenAI's Images API: `POST /images/generations` (JSON) and
 * `POST /images/edits` (`multipart/form-data`; one image as `image`, several as repeated
 * `image[]`, the mask as `mask`). Only the settings the caller set are sent; the endpoint has
 * already decided which of them the model takes.
 */
import type {
  CallSignal,
  ImageCallCommon,
  ImageEditOptions,
  ImageFormat,
  ImageGenerationOptions,
  ImageModel,
  ImageResult,
} from "../../spec/index.ts";
import { type HttpClient, headerValue, type UpstreamResponse } from "../kit/http-client.ts";
import { postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { readOpenAIError } from "../openai-compatible/map-openai-response.ts";
import { buildMultipartBody, type FormPart } from "./multipart-body.ts";
import { readImagesAnswer } from "./openai-images-response.ts";

export interface OpenAIImagesConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
}

export const MEDIA_TYPES: Record<ImageFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
};

/** The settings shared by both operations, as OpenAI names them (strings, as a form needs). */
function commonFields(options: ImageCallCommon): [string, string][] {
  const size =
    typeof options.size === "object"
      ? `${options.size.width}x${options.size.height}`
      : options.size;
  const fields: [string, string | number | undefined][] = [
    ["model", options.upstreamModel],
    ["prompt", options.prompt],
    ["n", options.n],
    ["size", size],
    ["quality", options.quality],
    ["background", options.background],
    ["output_format", options.outputFormat],
    ["output_compression", options.outputCompression],
    ["response_format", options.responseFormat],
    ["user", options.user],
  ];
  return fields.flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]]));
}

export function buildGenerationRequest(options: ImageGenerationOptions): Record<string, unknown> {
  const body: Record<string, unknown> = Object.fromEntries(commonFields(options));
  body.n = options.n;
  if (options.outputCompression !== undefined) body.output_compression = options.outputCompression;
  if (options.moderation !== undefined) body.moderation = options.moderation;
  return body;
}

export function buildEditParts(options: ImageEditOptions): FormPart[] {
  const parts: FormPart[] = commonFields(options).map(([name, value]) => ({ name, value }));
  if (options.inputFidelity) parts.push({ name: "input_fidelity", value: options.inputFidelity });
  const imageField = options.images.length > 1 ? "image[]" : "image";
  for (const image of options.images) {
    parts.push({
      name: imageField,
      filename: image.filename,
      contentType: MEDIA_TYPES[image.format],
      bytes: image.bytes,
    });
  }
  if (options.mask) {
    parts.push({
      name: "mask",
      filename: options.mask.filename,
      contentType: MEDIA_TYPES[options.mask.format],
      bytes: options.mask.bytes,
    });
  }
  return parts;
}

export class OpenAIImagesModel implements ImageModel {
  readonly specificationVersion = "switchyard-image-1" as const;
  readonly provider: string;
  readonly #config: OpenAIImagesConfig;

  constructor(config: OpenAIImagesConfig) {
    this.#config = config;
    this.provider = config.provider ?? "openai";
  }

  #headers(contentType: string): Record<string, string> {
    return {
      ...(this.#config.apiKey ? { authorization: `Bearer ${this.#config.apiKey}` } : {}),
      "content-type": contentType,
    };
  }

  async #read(response: UpstreamResponse, signal: CallSignal | undefined): Promise<ImageResult> {
    const result = await readJsonObject(response, signal, readImagesAnswer);
    const requestId = headerValue(response.headers, "x-request-id");
    return { ...result, ...(requestId ? { upstreamRequestId: requestId } : {}), warnings: [] };
  }

  async doGenerate(options: ImageGenerationOptions): Promise<ImageResult> {
    const response = await postUpstream(
      this.#config.http,
      `${this.#config.baseUrl}/images/generations`,
      {
        headers: this.#headers("application/json"),
        body: JSON.stringify(buildGenerationRequest(options)),
        signal: options.abortSignal,
        totalDeadline: true,
        readError: readOpenAIError,
      },
    );
    return this.#read(response, options.abortSignal);
  }

  async doEdit(options: ImageEditOptions): Promise<ImageResult> {
    const form = buildMultipartBody(buildEditParts(options));
    const response = await postUpstream(this.#config.http, `${this.#config.baseUrl}/images/edits`, {
      headers: this.#headers(form.contentType),
      body: form.body,
      signal: options.abortSignal,
      totalDeadline: true,
      readError: readOpenAIError,
    });
    return this.#read(response, options.abortSignal);
  }
}
