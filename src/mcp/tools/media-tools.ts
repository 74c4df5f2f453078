/**
 * @module mcp/tools/media-tools
 * `generate_image`, `edit_image` and `synthesize_speech`: the image and speech endpoints as
 * tools, run by the same core as HTTP. The tool takes one simple shape and builds the body the
 * model's family speaks (DashScope for `pictor`, the OpenAI images body for the others), so an
 * agent does not need to know the protocols.
 */
import { Type } from "@sinclair/typebox";
import type { ModelCallAnswer } from "../../core/model-call-runner.ts";
import { resolveModel } from "../../core/resolve-model.ts";
import { EDIT_FORM_LIMITS } from "../../endpoints/images/multipart-form.ts";
import { UploadedFile } from "../../endpoints/images/schema.ts";
import { fetchImage } from "../fetch-image.ts";
import {
  type ContentBlock,
  defineTool,
  runEndpoint,
  structuredResult,
  type ToolContext,
  withAnswerMeta,
} from "../tool.ts";

const ImageSource = Type.Object(
  {
    url: Type.Optional(Type.String({ description: "An http(s) URL on a public address." })),
    base64: Type.Optional(Type.String({ description: "The image bytes, base64 (or a data URL)." })),
  },
  { additionalProperties: false, description: "Exactly one of `url` and `base64`." },
);

const ImagesOutput = Type.Object({
  model: Type.String(),
  images: Type.Array(
    Type.Object({ url: Type.Optional(Type.String()), mime_type: Type.Optional(Type.String()) }),
  ),
  cost_micros: Type.Integer(),
});

/** The family of the model a name means for this key (undefined: the core will refuse it). */
function familyOf(context: ToolContext, name: string): string | undefined {
  return context.services.catalog.resolve(name, context.caller.key.modelAliases)?.family;
}

type ImageItem = { url?: string; b64_json?: string };

/**
 * An images answer as a tool result: links as resource links, base64 images as image blocks,
 * and `{model, images, cost_micros}` as structured content.
 */
function imagesResult(answer: ModelCallAnswer, images: ImageItem[]) {
  const format = (answer.body as { output_format?: string }).output_format ?? "png";
  const mimeType = `image/${format}`;
  const blocks: ContentBlock[] = [];
  const listed: { url?: string; mime_type?: string }[] = [];
  images.forEach((image, index) => {
    if (image.url) {
      blocks.push({ type: "resource_link", uri: image.url, name: `image-${index + 1}`, mimeType });
      listed.push({ url: image.url, mime_type: mimeType });
    } else if (image.b64_json) {
      blocks.push({ type: "image", data: image.b64_json, mimeType });
      listed.push({ mime_type: mimeType });
    }
  });
  const structured = { model: answer.model, images: listed, cost_micros: answer.costMicros };
  return withAnswerMeta(structuredResult(structured, blocks), answer);
}

export const generateImageTool = defineTool({
  name: "generate_image",
  title: "Generate images",
  description:
    "Generate images from a text prompt with an image model (pictor-*, imgmodel-*, legacy-img-2). Billed per image; links from pictor models stay valid 24 hours. Use quote to see the price first.",
  input: Type.Object(
    {
      model: Type.String(),
      prompt: Type.String({ minLength: 1 }),
      size: Type.Optional(
        Type.String({ description: "`1024x1024` style (`1024*1024` for pictor also works)." }),
      ),
      n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    },
    { additionalProperties: false },
  ),
  output: ImagesOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, context) {
    const pictor = familyOf(context, args.model) === "pictor";
    const body = pictor
      ? {
          model: args.model,
          input: { messages: [{ role: "user", content: [{ text: args.prompt }] }] },
          ...(args.size || args.n
            ? {
                parameters: {
                  ...(args.size ? { size: args.size.replace("x", "*") } : {}),
                  ...(args.n ? { n: args.n } : {}),
                },
              }
            : {}),
        }
      : { ...args, ...(args.size ? { size: args.size.replace("*", "x") } : {}) };
    const answer = await runEndpoint(context, "/v1/images/generations", body);
    const images = pictor
      ? (
          answer.body as { output: { choices: { message: { content: { image: string }[] } }[] } }
        ).output.choices.flatMap((choice) =>
          choice.message.content.map((item) => ({ url: item.image })),
        )
      : (answer.body as { data: ImageItem[] }).data;
    return imagesResult(answer, images);
  },
});

export const editImageTool = defineTool({
  name: "edit_image",
  title: "Edit images",
  description:
    "Edit one or more images with a prompt (imgmodel-*, legacy-img-2), optionally with a PNG mask whose transparent pixels mark what to change. Images are given by public URL or base64. Billed per image.",
  input: Type.Object(
    {
      model: Type.String(),
      prompt: Type.String({ minLength: 1 }),
      images: Type.Array(ImageSource, { minItems: 1, maxItems: 16 }),
      mask: Type.Optional(ImageSource),
      size: Type.Optional(Type.String()),
      n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    },
    { additionalProperties: false },
  ),
  output: ImagesOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, context) {
    const policy = {
      allowLoopback: context.services.config.webhooks.allow_loopback,
      allowPrivate: context.services.config.webhooks.allow_private_addresses,
    };
    // Refuse a model the key may not use before reading any image for it.
    resolveModel(context.services, context.caller.key, args.model, { path: "/v1/images/edits" });
    // One after another, within what the HTTP endpoint takes in one upload.
    const budget = {
      leftBytes: EDIT_FORM_LIMITS.totalBytes,
      totalBytes: EDIT_FORM_LIMITS.totalBytes,
    };
    const upload = async (source: { url?: string; base64?: string }, field: string) => {
      const image = await fetchImage(source, field, policy, budget);
      return new UploadedFile(field, image.filename, image.contentType, image.bytes);
    };
    // Reads happen before the quota lease and the hold: a few calls per account at a time,
    // and none for an account with nothing to pay with.
    const { images, mask } = await context.imageReads.run(
      context.services,
      context.caller,
      async () => {
        const read: UploadedFile[] = [];
        for (const [index, source] of args.images.entries())
          read.push(await upload(source, `images[${index}]`));
        return { images: read, mask: args.mask ? await upload(args.mask, "mask") : undefined };
      },
    );
    const body = {
      model: args.model,
      prompt: args.prompt,
      image: images,
      ...(mask ? { mask } : {}),
      ...(args.size ? { size: args.size } : {}),
      ...(args.n ? { n: args.n } : {}),
    };
    const answer = await runEndpoint(context, "/v1/images/edits", body);
    return imagesResult(answer, (answer.body as { data: ImageItem[] }).data);
  },
});

export const speechTool = defineTool({
  name: "synthesize_speech",
  title: "Synthesize speech",
  description:
    "Turn text into spoken audio with a speech model (tts3-*), returned as an MCP audio block (MP3 by default, or WAV). Billed per character.",
  input: Type.Object(
    {
      model: Type.String(),
      input: Type.String({ minLength: 1, maxLength: 4096 }),
      voice: Type.String({ description: "A voice of the model, e.g. Cherry (or alloy)." }),
      response_format: Type.Optional(Type.Union([Type.Literal("mp3"), Type.Literal("wav")])),
      speed: Type.Optional(Type.Number()),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({
    model: Type.String(),
    mime_type: Type.String(),
    bytes: Type.Integer(),
    cost_micros: Type.Integer(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, context) {
    const answer = await runEndpoint(context, "/v1/audio/speech", args);
    const audio = answer.binary ?? { contentType: "audio/mpeg", bytes: Buffer.alloc(0) };
    return withAnswerMeta(
      structuredResult(
        {
          model: answer.model,
          mime_type: audio.contentType,
          bytes: audio.bytes.length,
          cost_micros: answer.costMicros,
        },
        [{ type: "audio", data: audio.bytes.toString("base64"), mimeType: audio.contentType }],
      ),
      answer,
    );
  },
});
