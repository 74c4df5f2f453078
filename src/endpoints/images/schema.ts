/**
 * @module endpoints/images/schema
 * Request and response schemas of `/v1/images/generations` (the `pictor` body of spec 2.3 and
 * the OpenAI images body of the `imgmodel` family) and `/v1/images/edits` (spec 2.4, a
 * multipart form whose files arrive as `UploadedFile` values, documented as binary strings).
 */
import { Kind, type Static, Type, TypeRegistry } from "@sinclair/typebox";

/** A file part of a multipart form, read into memory by `multipart-form.ts`. */
export class UploadedFile {
  constructor(
    readonly field: string,
    readonly filename: string,
    readonly contentType: string,
    readonly bytes: Uint8Array,
  ) {}
}

TypeRegistry.Set("UploadedFile", (_schema, value) => value instanceof UploadedFile);

/** Validates an `UploadedFile`; in OpenAPI it reads as a binary string. */
const File = (description: string) =>
  Type.Unsafe<UploadedFile>({
    [Kind]: "UploadedFile",
    type: "string",
    format: "binary",
    description,
  });

// --- pictor (DashScope Qwen-Image) ----------------------------------------------------------

const PictorBlock = Type.Object(
  {
    text: Type.Optional(Type.String({ description: "Prompt." })),
    image: Type.Optional(Type.String({ description: "Reference image, public https URL." })),
  },
  { additionalProperties: false, description: "Either `text` or `image`, not both." },
);

export const PictorRequest = Type.Object(
  {
    model: Type.String({ description: "`pictor-image-*`." }),
    input: Type.Object(
      {
        messages: Type.Array(
          Type.Object(
            {
              role: Type.String({ description: "`user`." }),
              content: Type.Array(PictorBlock, {
                minItems: 1,
                description:
                  "At least one non-empty `text` block; editing models take 1 to 3 `image` blocks, text to image models none.",
              }),
            },
            { additionalProperties: false },
          ),
          {
            minItems: 1,
            maxItems: 1,
            description: "Exactly one message, role `user`.",
            errorMessage: "must hold exactly one message",
          },
        ),
      },
      { additionalProperties: false },
    ),
    parameters: Type.Optional(
      Type.Object(
        {
          size: Type.Optional(
            Type.String({
              description:
                "`W*H`, one of the model's sizes (`GET /v1/models` lists them); default `1024*1024`.",
            }),
          ),
          n: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 1,
              description: "Only 1.",
              errorMessage: "must be 1 (min 1, max 1)",
            }),
          ),
          seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
          watermark: Type.Optional(Type.Boolean()),
          negative_prompt: Type.Optional(Type.String({ maxLength: 500 })),
          prompt_extend: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: "Pictor image request" },
);
export type PictorRequest = Static<typeof PictorRequest>;

// --- OpenAI images (imgmodel, legacy-img) ---------------------------------------------------

const Quality = Type.Union(
  ["auto", "low", "medium", "high", "standard", "hd"].map((value) => Type.Literal(value)),
  { description: "`standard` and `hd` are aliases of the model's native qualities." },
);
const Background = Type.Union([
  Type.Literal("transparent"),
  Type.Literal("opaque"),
  Type.Literal("auto"),
]);
const OutputFormat = Type.Union([Type.Literal("png"), Type.Literal("jpeg"), Type.Literal("webp")]);
const ResponseFormat = Type.Union([Type.Literal("b64_json"), Type.Literal("url")], {
  description: "`url` is honoured only by `legacy-img-2`; `imgmodel-*` always answer `b64_json`.",
});

const openAIFields = {
  model: Type.String(),
  prompt: Type.String({ minLength: 1, maxLength: 32000 }),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  size: Type.Optional(
    Type.String({
      description:
        "`auto` or `WxH`: one of the model's sizes (`GET /v1/models` lists them). Generations of a model marked `free_form_size` also take any `WxH` in multiples of 16, at most 3840 px a side, long to short side at most 3:1; edits take listed sizes only.",
    }),
  ),
  quality: Type.Optional(Quality),
  background: Type.Optional(Background),
  output_format: Type.Optional(OutputFormat),
  output_compression: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  response_format: Type.Optional(ResponseFormat),
  user: Type.Optional(Type.String()),
};

export const OpenAIImageRequest = Type.Object(
  {
    ...openAIFields,
    moderation: Type.Optional(Type.Union([Type.Literal("auto"), Type.Literal("low")])),
  },
  { additionalProperties: false, title: "OpenAI images request (imgmodel, legacy-img)" },
);
export type OpenAIImageRequest = Static<typeof OpenAIImageRequest>;

/**
 * The body the pipeline checks first: any object with a `model`. The model's catalog family
 * picks the real schema (`PictorRequest` or `OpenAIImageRequest`), listed under `anyOf` for
 * the OpenAPI document.
 */
export const ImageGenerationBody = Type.Object(
  { model: Type.String() },
  { additionalProperties: true, anyOf: [PictorRequest, OpenAIImageRequest] },
);
export type ImageGenerationBody = Static<typeof ImageGenerationBody>;

export const ImageEditRequest = Type.Object(
  {
    ...openAIFields,
    image: Type.Array(File("PNG, JPEG or WebP; repeat as `image[]` for several."), {
      minItems: 1,
    }),
    mask: Type.Optional(File("PNG of the image's size; transparent pixels are edited.")),
    input_fidelity: Type.Optional(Type.Union([Type.Literal("high"), Type.Literal("low")])),
  },
  { additionalProperties: false },
);
export type ImageEditRequest = Static<typeof ImageEditRequest>;

// --- Responses (documentation) ----------------------------------------------------------------

export const PictorResponse = Type.Object({
  request_id: Type.String(),
  output: Type.Object({
    choices: Type.Array(
      Type.Object({
        finish_reason: Type.String(),
        message: Type.Object({
          role: Type.Literal("assistant"),
          content: Type.Array(Type.Object({ image: Type.String({ description: "Valid 24 h." }) })),
        }),
      }),
    ),
  }),
  usage: Type.Object({
    image_count: Type.Integer(),
    height: Type.Integer(),
    width: Type.Integer(),
  }),
});

export const ImagesResponse = Type.Object({
  created: Type.Integer(),
  data: Type.Array(
    Type.Object({ b64_json: Type.Optional(Type.String()), url: Type.Optional(Type.String()) }),
  ),
  background: Type.Optional(Type.String()),
  output_format: Type.Optional(Type.String()),
  quality: Type.Optional(Type.String()),
  size: Type.Optional(Type.String()),
  usage: Type.Optional(
    Type.Object({
      input_tokens: Type.Integer(),
      input_tokens_details: Type.Object({
        text_tokens: Type.Integer(),
        image_tokens: Type.Integer(),
      }),
      output_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
    }),
  ),
});

export const ImageGenerationResponse = Type.Union([PictorResponse, ImagesResponse]);
