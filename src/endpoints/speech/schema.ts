/**
 * @module endpoints/speech/schema
 * Request schema of `POST /v1/audio/speech` (spec 2.9), shaped like OpenAI's so the official
 * clients work unchanged. The success body is binary audio (`audio/mpeg` or `audio/wav`).
 */
import { type Static, Type } from "@sinclair/typebox";

export const SpeechRequest = Type.Object(
  {
    model: Type.String({ description: "`tts3-flash` or `tts3-instruct-flash`." }),
    input: Type.String({
      minLength: 1,
      description: "Text to speak; billed per character (Unicode code point).",
    }),
    voice: Type.Optional(
      Type.String({
        description:
          "A voice of the model (default `Cherry`). OpenAI voice names (`alloy`, `nova`, ...) fall back to `Cherry`.",
      }),
    ),
    response_format: Type.Optional(
      Type.Union([Type.Literal("mp3"), Type.Literal("wav")], {
        description: "`mp3` (default) or `wav`; `tts3-instruct-flash` always answers `wav`.",
      }),
    ),
    instructions: Type.Optional(
      Type.String({ description: "Tone, speed and emotion in words; `tts3-instruct-flash` only." }),
    ),
    speed: Type.Optional(
      Type.Number({
        description:
          "Accepted for compatibility, any number; has no effect (use `instructions`). Spec 2.9.",
      }),
    ),
    stream_format: Type.Optional(
      Type.Literal("audio", { description: "Only raw audio streaming is offered." }),
    ),
  },
  { additionalProperties: true },
);
export type SpeechRequest = Static<typeof SpeechRequest>;
