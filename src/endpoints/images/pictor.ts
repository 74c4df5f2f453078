/**
 * @module endpoints/images/pictor
 * The `pictor` family on `/v1/images/generations` (spec 2.3): the body's rules, checked before
 * anything goes upstream and answered in the provider dialect (`400 InvalidParameter`), the
 * call through the DashScope adapter, and the response of spec 2.3 (the vendor's image links,
 * valid 24 hours, handed on as they are). Billed per image.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { compileValidator } from "../../core/validate.ts";
import { GatewayError } from "../../errors/index.ts";
import type { ImageSize } from "../../spec/index.ts";
import { callImageModel, keepVendorRateLimitCode } from "./image-call.ts";
import { type ImageJob, settleImageUsage } from "./image-cost.ts";
import { PictorRequest } from "./schema.ts";

export const DEFAULT_PICTOR_SIZE = "1024*1024";

const validateSchema = compileValidator(PictorRequest);

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError("invalid_parameter", { detail }, { param });
}

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.hostname !== "";
  } catch {
    return false;
  }
}

function checkContent(body: PictorRequest, model: CatalogModel): void {
  // The schema holds the body to exactly one message with at least one block.
  const [message] = body.input.messages;
  if (message?.role !== "user")
    throw invalid("input.messages[0].role", "input.messages[0].role must be 'user'.");
  let texts = 0;
  let images = 0;
  message.content.forEach((block, index) => {
    const path = `input.messages[0].content[${index}]`;
    if (block.text !== undefined && block.image !== undefined)
      throw invalid(path, `${path} holds both text and image; a block holds one of them.`);
    if (block.text === undefined && block.image === undefined)
      throw invalid(path, `${path} holds neither text nor image.`);
    if (block.text !== undefined && block.text.trim() !== "") texts++;
    if (block.image !== undefined) {
      if (!isHttpsUrl(block.image))
        throw invalid(`${path}.image`, `${path}.image must be a publicly reachable https URL.`);
      images++;
    }
  });
  if (texts === 0)
    throw invalid(
      "input.messages[0].content",
      "input.messages[0].content needs at least one block with (non-empty) text.",
    );
  const { min, max } = model.capabilities?.reference_images ?? { min: 0, max: 0 };
  if (images < min || images > max) {
    throw invalid(
      "input.messages[0].content",
      max === 0
        ? `The model '${model.id}' is text to image and takes no image blocks; got ${images}.`
        : `The model '${model.id}' needs ${min} to ${max} image blocks (reference images); got ${images}.`,
    );
  }
}

/** Checks a `pictor` body (schema, then the model's rules) and returns it typed. */
export function validatePictor(raw: unknown, model: CatalogModel): PictorRequest {
  const body = validateSchema(raw);
  checkContent(body, model);
  const size = body.parameters?.size ?? DEFAULT_PICTOR_SIZE;
  const sizes = model.capabilities?.sizes ?? [DEFAULT_PICTOR_SIZE];
  if (!sizes.includes(size))
    throw invalid(
      "parameters.size",
      `parameters.size '${size}' is not supported; use one of ${sizes.join(", ")}.`,
    );
  return body;
}

export function pictorSize(body: PictorRequest): ImageSize {
  const [width, height] = (body.parameters?.size ?? DEFAULT_PICTOR_SIZE).split("*").map(Number);
  return { width: width ?? 1024, height: height ?? 1024 };
}

function blocks(body: PictorRequest) {
  return body.input.messages[0]?.content ?? [];
}

export function pictorJob(body: PictorRequest): ImageJob {
  const prompt = blocks(body)
    .flatMap((block) => (block.text !== undefined && block.text.trim() !== "" ? [block.text] : []))
    .join("\n");
  return { prompt, n: 1, size: pictorSize(body), sizeSeparator: "*" };
}

export async function runPictor(
  body: PictorRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const job = pictorJob(body);
  const size = pictorSize(body);
  const parameters = body.parameters ?? {};
  const result = await callImageModel(context, 1, (model, route) =>
    model.doGenerate({
      upstreamModel: route.upstreamModel,
      prompt: job.prompt,
      referenceUrls: blocks(body).flatMap((block) => (block.image ? [block.image] : [])),
      n: 1,
      size,
      ...(parameters.seed !== undefined ? { seed: parameters.seed } : {}),
      // Spec 2.3: the watermark is off unless asked for, whatever the vendor's own default.
      watermark: parameters.watermark ?? false,
      ...(parameters.negative_prompt !== undefined
        ? { negativePrompt: parameters.negative_prompt }
        : {}),
      ...(parameters.prompt_extend !== undefined ? { promptExtend: parameters.prompt_extend } : {}),
      abortSignal: context.signal,
    }),
  ).catch((error: unknown) => {
    throw keepVendorRateLimitCode(error);
  });
  const width = result.width ?? size.width;
  const height = result.height ?? size.height;
  const content = result.images.flatMap((image) => (image.url ? [{ image: image.url }] : []));
  const { usage } = await settleImageUsage(context.model, job, result, { width, height });
  return {
    kind: "json",
    body: {
      request_id: context.requestId,
      output: {
        choices: [{ finish_reason: "stop", message: { role: "assistant", content } }],
      },
      usage: { image_count: content.length, height, width },
    },
    usage,
    settleDetails: { upstreamRequestId: result.upstreamRequestId },
    warnings: result.warnings,
  };
}
