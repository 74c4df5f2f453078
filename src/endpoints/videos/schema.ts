/**
 * @module endpoints/videos/schema
 * Request schema of `POST /v1/videos/generations` (spec 2.5 and 2.6): one body for both video
 * families, the model picks which fields apply (`plan-video.ts`). Family A's `input` and
 * `parameters` are the vendor's own objects, passed through unchanged; the top-level
 * `duration`, `resolution` and `aspect_ratio` are the gateway's, used for billing.
 */
import { type Static, Type } from "@sinclair/typebox";

const PassThrough = Type.Object(
  {},
  {
    additionalProperties: true,
    description: "Passed to the vendor unchanged (family A).",
  },
);

export const VideoGenerationRequest = Type.Object(
  {
    model: Type.String({ description: "A video model id from `GET /v1/models`." }),
    duration: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 600, description: "Seconds; billed. Default 5." }),
    ),
    resolution: Type.Optional(
      Type.String({ maxLength: 16, description: "`480p`, `720p` or `1080p`; billed." }),
    ),
    aspect_ratio: Type.Optional(Type.String({ maxLength: 16, description: "Default `16:9`." })),
    input: Type.Optional(PassThrough),
    parameters: Type.Optional(PassThrough),
    prompt: Type.Optional(
      Type.String({ maxLength: 5000, description: "Family B: what to generate." }),
    ),
    image: Type.Optional(
      Type.Object(
        // Within the default 10 MiB body limit (`server.body_limit_bytes`), which also applies.
        { url: Type.String({ minLength: 1, maxLength: 10_000_000 }) },
        {
          additionalProperties: false,
          description: "Family B: the first frame, as an object `{url}` (a string is refused).",
        },
      ),
    ),
    webhook_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: "Where the final task record is POSTed, signed (docs/videos.md).",
      }),
    ),
  },
  { additionalProperties: true },
);
export type VideoGenerationRequest = Static<typeof VideoGenerationRequest>;

export const VideoTaskRecord = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal("video.generation"),
    provider_task_id: Type.Union([Type.String(), Type.Null()]),
    model: Type.String(),
    status: Type.String(),
    created_at: Type.Integer(),
    finished_at: Type.Union([Type.Integer(), Type.Null()]),
  },
  {
    additionalProperties: true,
    description: "The vendor's task record with the platform's fields.",
  },
);
