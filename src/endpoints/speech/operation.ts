/**
 * @module endpoints/speech/operation
 * The transport-free speech call: picks a route, calls the adapter and waits for the first audio
 * bytes (so a failure before any audio is still an ordinary error, and falls back to the next
 * route), then streams the audio in the client's container as the upstream produces it. Billed
 * by input characters, settled when the audio is complete; an upstream failure mid-audio is
 * charged nothing and cuts the response.
 */

import { adapterFor } from "../../core/adapter-for.ts";
import { droppedFieldWarnings, undeclaredFields } from "../../core/dropped-fields.ts";
import type { OperationContext, OperationResult } from "../../core/operation.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import { type SpeechResult, UpstreamError } from "../../spec/index.ts";
import { CONTENT_TYPES, toContainer } from "./audio-container.ts";
import { countCharacters, speechUsage } from "./estimate-speech-cost.ts";
import { planSpeech } from "./plan-speech.ts";
import { SpeechRequest } from "./schema.ts";

interface Peeked {
  first: IteratorResult<Uint8Array>;
  iterator: AsyncIterator<Uint8Array>;
}

/**
 * Reads the first chunk with bytes in it now (empty ones are skipped: base64 of nothing decodes
 * to them); the returned stream replays it, then goes on with the rest.
 */
async function peek(audio: AsyncIterable<Uint8Array>): Promise<Peeked> {
  const iterator = audio[Symbol.asyncIterator]();
  let first = await iterator.next();
  while (!first.done && first.value.byteLength === 0) first = await iterator.next();
  return { first, iterator };
}

/**
 * The audio's bytes; at their end the request is settled (`settle`), and a read that fails marks
 * the delivery failed unless the client had gone. A generator function made once, not per call:
 * V8 keeps one made per call, and all it closes over, until its next full collection.
 */
async function* settledAtEnd(
  audio: AsyncIterable<Uint8Array>,
  context: OperationContext,
  state: { failed: boolean },
  settle: () => Promise<unknown>,
): AsyncGenerator<Uint8Array> {
  try {
    yield* audio;
  } catch (error) {
    state.failed = !context.signal.aborted;
    throw error;
  }
  await settle();
}

async function* replay({ first, iterator }: Peeked): AsyncGenerator<Uint8Array> {
  if (first.done) return;
  try {
    yield first.value;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}

export async function runSpeech(
  body: SpeechRequest,
  context: OperationContext,
): Promise<OperationResult> {
  const plan = planSpeech(body, context.model);
  let result: SpeechResult | undefined;
  const peeked = await attemptRoutes(
    context.model,
    async (route) => {
      const speechModel = adapterFor(
        context.services.providers,
        "speechModel",
        route,
        context.model,
      );
      result = await speechModel.doSpeech({
        upstreamModel: route.upstreamModel,
        text: body.input,
        voice: plan.voice.voice,
        format: plan.format,
        ...(plan.instructions ? { instructions: plan.instructions } : {}),
        abortSignal: context.signal,
      });
      const audio = await peek(result.audio);
      // A vendor's "success" without a byte of audio is no answer (and would otherwise go out
      // as a bare container header, billed).
      if (audio.first.done)
        throw new UpstreamError({
          kind: "protocol",
          message: "The vendor answered without audio.",
        });
      return audio;
    },
    logAttempts(context),
    context.services.routeHealth,
  );
  const speech = result!;
  let audio: AsyncIterable<Uint8Array>;
  try {
    // The container's first bytes are made before the answer starts, so audio that is not what
    // the vendor says it is (a WAV header that does not parse) is an upstream error, charged
    // nothing, rather than a 200 of something else.
    audio = replay(await peek(toContainer({ ...speech, audio: replay(peeked) }, plan.format)));
  } catch (error) {
    await peeked.iterator.return?.(); // let go of the upstream body
    if (UpstreamError.isInstance(error) || !(error instanceof Error) || context.signal.aborted)
      throw error;
    throw new UpstreamError({ kind: "protocol", message: error.message, cause: error });
  }
  const state = { failed: false };
  const usage = () => ({ media: speechUsage(body.input, speech.characters) });

  const warnings = [
    ...droppedFieldWarnings(undeclaredFields(body, SpeechRequest)),
    ...plan.warnings,
    ...speech.warnings,
  ];
  return {
    kind: "binary",
    contentType: CONTENT_TYPES[plan.format],
    body: settledAtEnd(audio, context, state, () =>
      context.settle(usage(), { upstreamRequestId: speech.upstreamRequestId }),
    ),
    usage: async () => (state.failed ? undefined : usage()),
    headers: {
      // Percent-encoded by the HTTP layer when not printable ASCII (http/response-headers).
      "x-switchyard-voice": plan.voice.voice,
      "x-switchyard-characters": String(countCharacters(body.input)),
    },
    warnings,
  };
}
