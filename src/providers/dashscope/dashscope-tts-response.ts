/**
 * @module providers/dashscope/dashscope-tts-response
 * Reading Qwen3-TTS answers: the SSE stream (`X-DashScope-SSE: enable`), whose events carry
 * base64 PCM in `output.audio.data` and end with `finish_reason: "stop"`, and the JSON answer,
 * whose `output.audio` holds a WAV file as a URL on a result host (or, rarely, inline base64).
 */

import { type CallSignal, UpstreamError } from "../../spec/index.ts";
import { toUpstreamError } from "../kit/http-client.ts";
import { decodeSseBatches } from "../kit/sse-decoder.ts";
import { type DashScopeErrorBody, dashScopeErrorFromBody } from "./dashscope-error.ts";

export interface TtsBody extends DashScopeErrorBody {
  output?: {
    finish_reason?: string | null;
    audio?: { url?: string; data?: string; id?: string; expires_at?: number };
  } | null;
  usage?: { characters?: number } | null;
}

/** What the stream has told so far. */
export interface TtsStreamReport {
  characters?: number;
  requestId?: string;
}

function protocolError(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError({ kind: "protocol", message, cause });
}

export function parseTtsBody(text: string): TtsBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw protocolError("DashScope answered with invalid JSON.", error);
  }
  if (typeof body !== "object" || body === null) {
    throw protocolError("DashScope answered with an unexpected body.");
  }
  const tts = body as TtsBody;
  if (typeof tts.code === "string" && tts.code !== "" && !tts.output) {
    throw dashScopeErrorFromBody(tts);
  }
  return tts;
}

function decodeBase64(data: string): Uint8Array {
  const bytes = Buffer.from(data, "base64");
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The PCM chunks of a TTS event stream, as they arrive; `report` fills in as events come. */
export async function* readTtsStream(
  body: AsyncIterable<Buffer>,
  report: TtsStreamReport,
  signal?: CallSignal,
): AsyncGenerator<Uint8Array> {
  let finished = false;
  let audioBytes = 0;
  try {
    // The event with `finish_reason: "stop"` ends the audio: nothing after it is read (a vendor
    // that keeps the stream open, or sends something broken after it, does not undo a complete
    // answer).
    reading: for await (const events of decodeSseBatches(body))
      for (const event of events) {
        const tts = event.event === "error" ? undefined : parseTtsBody(event.data);
        if (!tts) throw dashScopeErrorFromBody(parseErrorEvent(event.data));
        report.requestId = tts.request_id ?? report.requestId;
        if (typeof tts.usage?.characters === "number") report.characters = tts.usage.characters;
        const data = tts.output?.audio?.data;
        if (data) {
          const pcm = decodeBase64(data);
          audioBytes += pcm.length;
          yield pcm;
        }
        if (tts.output?.finish_reason === "stop") {
          finished = true;
          break reading;
        }
      }
  } catch (error) {
    throw UpstreamError.isInstance(error) ? error : toUpstreamError(error, signal);
  }
  if (!finished)
    throw protocolError("DashScope's audio stream ended before the audio was complete.");
  if (audioBytes === 0) throw protocolError("DashScope's audio stream finished without any audio.");
}

function parseErrorEvent(data: string): DashScopeErrorBody {
  try {
    const body = JSON.parse(data) as unknown;
    if (typeof body === "object" && body !== null) return body as DashScopeErrorBody;
  } catch {
    // Not JSON: the text is the message.
  }
  return { message: data };
}

/**
 * The inline audio of a JSON answer, when DashScope sent the bytes instead of a URL; `data` of
 * another type than a base64 string is a protocol error (a 502), never a crash.
 */
export function inlineAudio(body: TtsBody): Uint8Array | undefined {
  const data: unknown = body.output?.audio?.data;
  if (data === undefined || data === null || data === "") return undefined;
  if (typeof data !== "string")
    throw protocolError(`DashScope's inline audio is ${typeof data}, not base64 text.`);
  return decodeBase64(data);
}
