/**
 * @module endpoints/images/edits
 * `/v1/images/edits` (spec 2.4): the rules of an edit for the model, checked on the uploaded
 * bytes before anything goes upstream (gateway dialect: mask support, image count, each file's
 * real format, the mask's format, size and transparency, DALL·E 2's square transparent PNG),
 * and the call through the model's `doEdit`.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { GatewayError } from "../../errors/index.ts";
import type { ImageUpload } from "../../spec/index.ts";
import { callImageModel } from "./image-call.ts";
import { type ResolvedOptions, resolveOpenAIOptions, takesGptOptions } from "./image-options.ts";
import { describeKind, probeImage } from "./image-probe.ts";
import { finishImages, openAIJob } from "./openai-images.ts";
import type { ImageEditRequest, UploadedFile } from "./schema.ts";

/** GPT-image models take up to 16 images; DALL·E 2 one square PNG under 4 MB. */
export const MAX_EDIT_IMAGES = 16;
const LEGACY_FILE_BYTES = 4 * 1024 * 1024;

export interface CheckedEdit {
  images: ImageUpload[];
  mask?: ImageUpload;
  options: ResolvedOptions;
}

function article(kind: string): string {
  return /^[AEIOU]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

function upload(file: UploadedFile, model: CatalogModel, param: string): ImageUpload {
  const probed = probeImage(file.bytes);
  const pngOnly = !takesGptOptions(model);
  if (!probed.ok && probed.reason === "format") {
    throw new GatewayError(
      "invalid_image_format",
      {
        filename: file.filename,
        actual:
          probed.kind === "unknown"
            ? describeKind(probed.kind)
            : `${article(describeKind(probed.kind))} image`,
        model: model.id,
        accepted: pngOnly ? "PNG only" : "PNG, JPEG and WebP",
      },
      { param },
    );
  }
  if (!probed.ok) {
    throw new GatewayError(
      "invalid_image",
      {
        detail: `The file '${file.filename}' is not a readable ${describeKind(probed.kind)} image.`,
      },
      { param },
    );
  }
  const { format, width, height } = probed.image;
  if (pngOnly && format !== "png") {
    throw new GatewayError(
      "invalid_image_format",
      {
        filename: file.filename,
        actual: `${article(describeKind(format))} image`,
        model: model.id,
        accepted: "PNG only",
      },
      { param },
    );
  }
  return { bytes: file.bytes, filename: file.filename, format, width, height };
}

function checkMask(file: UploadedFile, first: ImageUpload): ImageUpload {
  const probed = probeImage(file.bytes);
  const fail = (detail: string) => new GatewayError("invalid_mask", { detail }, { param: "mask" });
  if (!probed.ok || probed.image.format !== "png") {
    const kind = probed.ok ? probed.image.format : probed.kind;
    throw fail(
      `The mask must be a PNG image; '${file.filename}' is ${article(describeKind(kind))} file.`,
    );
  }
  const { width, height, alpha } = probed.image;
  if (width !== first.width || height !== first.height) {
    throw fail(
      `The mask is ${width}x${height} but the image is ${first.width}x${first.height}; they must have the same dimensions.`,
    );
  }
  if (!alpha) {
    throw fail(
      "The mask has no alpha channel; its fully transparent pixels mark the area to edit.",
    );
  }
  return { bytes: file.bytes, filename: file.filename, format: "png", width, height };
}

/** The model's rules for this edit; returns the probed uploads and the mapped options. */
export function checkEdit(body: ImageEditRequest, model: CatalogModel): CheckedEdit {
  if (body.mask && model.capabilities?.mask !== true)
    throw new GatewayError("mask_not_supported", { model: model.id }, { param: "mask" });
  const max = model.capabilities?.multiple_images === true ? MAX_EDIT_IMAGES : 1;
  if (body.image.length > max) {
    throw new GatewayError(
      "too_many_images",
      { model: model.id, max, count: body.image.length },
      { param: "image" },
    );
  }
  const images = body.image.map((file, index) =>
    upload(file, model, body.image.length > 1 ? `image[${index}]` : "image"),
  );
  const first = images[0]!;
  const mask = body.mask ? checkMask(body.mask, first) : undefined;
  if (!takesGptOptions(model)) {
    const invalid = (detail: string) =>
      new GatewayError("invalid_image", { detail }, { param: "image" });
    if (first.width !== first.height)
      throw invalid(
        `${model.id} edits square images only; '${first.filename}' is ${first.width}x${first.height}.`,
      );
    if (first.bytes.length >= LEGACY_FILE_BYTES)
      throw invalid(`${model.id} takes images under 4 MB; '${first.filename}' is larger.`);
    if (!mask && !probeAlpha(first.bytes))
      throw invalid(
        `Without a mask ${model.id} edits the transparent area of the image, and '${first.filename}' has no transparency.`,
      );
  }
  return { images, ...(mask ? { mask } : {}), options: resolveOpenAIOptions(model, body, "edit") };
}

function probeAlpha(bytes: Uint8Array): boolean {
  const probed = probeImage(bytes);
  return probed.ok && probed.image.alpha;
}

export async function runImageEdit(
  body: ImageEditRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const checked = checkEdit(body, context.model);
  const job = openAIJob(body, checked.options, checked.images);
  const result = await callImageModel(context, job.n, (model, route) => {
    if (!model.doEdit)
      throw new GatewayError("provider_not_configured", { model: context.model.id });
    return model.doEdit({
      ...checked.options.common,
      upstreamModel: route.upstreamModel,
      prompt: body.prompt,
      n: job.n,
      images: checked.images,
      ...(checked.mask ? { mask: checked.mask } : {}),
      ...(body.input_fidelity && takesGptOptions(context.model)
        ? { inputFidelity: body.input_fidelity }
        : {}),
      abortSignal: context.signal,
    });
  });
  return finishImages(context, job, result, checked.options, "edit");
}
