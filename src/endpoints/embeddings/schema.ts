/**
 * @module endpoints/embeddings/schema
 * Request and response schemas of `POST /v1/embeddings` (spec 2.8). `input` takes OpenAI's
 * forms: a string, an array of strings, an array of token ids, or an array of such arrays.
 * Unknown fields are accepted and ignored, as OpenAI-compatible clients may send extras.
 */
import { type Static, Type } from "@sinclair/typebox";

/** Inputs one request may carry (OpenAI's limit); larger batches than a vendor's are split. */
export const MAX_EMBEDDING_INPUTS = 2048;

const TokenIds = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 });

export const EmbeddingRequest = Type.Object(
  {
    model: Type.String({ description: "Model id from `GET /v1/models` (an embedding model)." }),
    // One array schema for every array form, so a violation is explained once (e.g. too many
    // items); `validate-embedding-request` checks that an array does not mix the forms.
    input: Type.Union(
      [
        Type.String(),
        Type.Array(Type.Union([Type.String(), Type.Integer({ minimum: 0 }), TokenIds]), {
          minItems: 1,
          maxItems: MAX_EMBEDDING_INPUTS,
        }),
      ],
      {
        description:
          "Text to embed: a string or an array of strings (a batch, split as the upstream needs). " +
          "Token ids (an array of integers, or an array of such arrays) are accepted only where " +
          "the upstream takes them.",
      },
    ),
    encoding_format: Type.Optional(
      Type.Union([Type.Literal("float"), Type.Literal("base64")], {
        default: "float",
        description: "`base64`: little-endian float32 bytes, base64 encoded.",
      }),
    ),
    dimensions: Type.Optional(
      Type.Integer({ minimum: 1, description: "Output size; the model's default when omitted." }),
    ),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type EmbeddingRequest = Static<typeof EmbeddingRequest>;

export const EmbeddingResponse = Type.Object({
  object: Type.Literal("list"),
  data: Type.Array(
    Type.Object({
      object: Type.Literal("embedding"),
      index: Type.Integer(),
      embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
