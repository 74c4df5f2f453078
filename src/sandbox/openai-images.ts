/**
 * @module sandbox/openai-images
 * OpenAI's Images API in the sandbox: `POST /openai/v1/images/generations` (JSON) and
 * `POST /openai/v1/images/edits` (`multipart/form-data`), answering real pictures of the asked
 * size and format (base64, or for DALL·E 2 with `response_format=url` a signed link valid 60
 * minutes) with GPT-image token usage. Faults as for embeddings (`status`, `fail-times`,
 * `delay`, `hang`, `drop`, `malformed`, `no-usage`) plus `code=<code>` (e.g.
 * `moderation_blocked`). The request log keeps a summary of uploads, not their bytes.
 */
import type { IncomingMessage } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { stableHash } from "./deterministic-text.ts";
import { OPENAI_RESULT_TTL_SECONDS, signResultUrl } from "./image-results.ts";
import { synthesize } from "./image-synth.ts";
import {
  INVALID_API_KEY,
  openAIError,
  openAIErrorForStatus,
  sendOpenAIError,
} from "./openai-errors.ts";
import { FormTooLarge, type ParsedForm, readForm } from "./openai-images-multipart.ts";
import {
  ImagesInvalid,
  type ImagesRequest,
  imagesUsage,
  parseImagesRequest,
} from "./openai-images-request.ts";
import { type FaultErrors, faultPreflight, hasBearerKey, sendEmbedBody } from "./request-faults.ts";
import { requestOrigin } from "./signed-links.ts";
import type { SandboxState } from "./state.ts";

export const IMAGES_PREFIX = "/openai/v1/images";

const CODE_ERRORS: Record<string, { type: string; message: string }> = {
  moderation_blocked: {
    type: "image_generation_user_error",
    message:
      "Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID.",
  },
};

const FAULT_ERRORS: FaultErrors = {
  badSpec: (reply, message) =>
    sendOpenAIError(
      reply,
      400,
      openAIError(message, "invalid_request_error", null, "invalid_sandbox_fault"),
    ),
  status: (reply, status, headers) =>
    sendOpenAIError(reply, status, openAIErrorForStatus(status), headers),
};

/**
 * The `data` items: links, or pictures drawn one after another with a turn of the event loop
 * between them, so a request for many large pictures never holds the sandbox for all of them
 * (one picture takes up to about 0.75 s).
 */
async function picturesFor(request: FastifyRequest, parsed: ImagesRequest, state: SandboxState) {
  const origin = requestOrigin(request);
  const data: Array<{ url: string } | { b64_json: string }> = [];
  for (let index = 0; index < parsed.n; index++) {
    const seed = stableHash([parsed.model, parsed.prompt, parsed.inputDigest, index].join("\n"));
    const picture = {
      width: parsed.width,
      height: parsed.height,
      seed,
      transparent: parsed.background === "transparent",
      format: parsed.format,
    };
    if (parsed.responseFormat === "url") {
      data.push({ url: signResultUrl(origin, picture, OPENAI_RESULT_TTL_SECONDS, state.links) });
      continue;
    }
    // A timer, not setImmediate: it lets the loop poll for I/O (other requests) first.
    if (index > 0) await delay(0);
    data.push({ b64_json: (await synthesize(picture)).toString("base64") });
  }
  return data;
}

async function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  state: SandboxState,
  fields: Record<string, unknown>,
  edit?: ParsedForm,
): Promise<FastifyReply | undefined> {
  if (!hasBearerKey(request.headers)) return sendOpenAIError(reply, 401, INVALID_API_KEY);
  const prompt = typeof fields.prompt === "string" ? fields.prompt : "";
  const checked = await faultPreflight(request, reply, state, [prompt], FAULT_ERRORS);
  if ("done" in checked) return checked.done;
  const { fault } = checked;
  if (fault.code) {
    const known = CODE_ERRORS[fault.code];
    const body = openAIError(
      known?.message ?? `Sandbox fault ${fault.code}.`,
      known?.type ?? "invalid_request_error",
      null,
      fault.code,
    );
    return sendOpenAIError(reply, 400, body);
  }
  let parsed: ImagesRequest;
  try {
    const uploads = edit?.files.map((file) => ({
      filename: file.filename,
      bytes: file.bytes,
      field: file.field,
    }));
    parsed = parseImagesRequest(
      fields,
      uploads && {
        images: uploads.filter((file) => file.field === "image" || file.field === "image[]"),
        mask: uploads.find((file) => file.field === "mask"),
      },
    );
  } catch (error) {
    if (!(error instanceof ImagesInvalid)) throw error;
    return sendOpenAIError(
      reply,
      400,
      openAIError(error.message, "invalid_request_error", error.param, error.code),
    );
  }
  const data = await picturesFor(request, parsed, state);
  const body = parsed.gpt
    ? {
        created: Math.floor(Date.now() / 1000),
        background: parsed.background,
        data,
        output_format: parsed.format,
        quality: parsed.quality,
        size: `${parsed.width}x${parsed.height}`,
        ...(fault.noUsage ? {} : { usage: imagesUsage(parsed) }),
      }
    : { created: Math.floor(Date.now() / 1000), data };
  return sendEmbedBody(reply, state, fault, body);
}

/** Parsed forms by request; the logged body is only a summary of them. */
const forms = new WeakMap<IncomingMessage, ParsedForm>();

function summary(form: ParsedForm) {
  return {
    ...form.fields,
    files: form.files.map((file) => ({
      field: file.field,
      filename: file.filename,
      bytes: file.bytes.length,
    })),
  };
}

export function registerOpenAIImageRoutes(app: FastifyInstance, state: SandboxState): void {
  app.post(`${IMAGES_PREFIX}/generations`, (request, reply) => {
    const body = request.body;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return sendOpenAIError(
        reply,
        400,
        openAIError("The body must be a JSON object.", "invalid_request_error"),
      );
    }
    return answer(request, reply, state, body as Record<string, unknown>);
  });
  void app.register(async (scope) => {
    scope.addContentTypeParser("multipart/form-data", (request, payload, done) => {
      readForm(request.headers, payload).then(
        (form) => {
          forms.set(request.raw, form);
          done(null, summary(form));
        },
        (error: Error) => {
          const status = error instanceof FormTooLarge ? 413 : 400;
          done(Object.assign(error, { statusCode: status }), undefined);
        },
      );
    });
    scope.post(`${IMAGES_PREFIX}/edits`, (request, reply) => {
      const form = forms.get(request.raw);
      if (!form) {
        const message = "Invalid Content-Type header, expected multipart/form-data.";
        return sendOpenAIError(reply, 400, openAIError(message, "invalid_request_error"));
      }
      return answer(request, reply, state, form.fields, form);
    });
  });
}
