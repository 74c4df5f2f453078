/**
 * @module sandbox/speech-handler
 * Qwen3-TTS on the sandbox's multimodal-generation endpoint: validates the request, speaks the
 * text (espeak-ng or the tone voice), keeps the WAV on the result host, and answers either the
 * JSON body with `output.audio.url`, or with `X-DashScope-SSE: enable` an event stream of base64
 * PCM chunks ending in a `finish_reason: "stop"` event. Stream faults: `chunk-delay`, `drop`,
 * `malformed`; `no-usage` leaves `usage` out.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { synthesizeSpeech, TTS_SAMPLE_RATE } from "./audio-synth.ts";
import { pcmBytes, wavFile } from "./audio-wav.ts";
import { sleep, writeFlushed } from "./connection.ts";
import { dashScopeError, sendDashScopeError } from "./dashscope-errors.ts";
import type { MultimodalContext, MultimodalHandler } from "./dashscope-multimodal.ts";
import { stripDirectives } from "./faults.ts";
import { requestOrigin } from "./signed-links.ts";
import { parseTtsRequest } from "./speech-request.ts";
import { resultStoreFor, type StoredResult } from "./speech-results.ts";

/** Samples per stream event: 200 ms of audio. */
export const STREAM_CHUNK_SAMPLES = TTS_SAMPLE_RATE / 5;

/** One native DashScope SSE event (no space after the colons; the status line is a comment). */
export function dashScopeEvent(id: number, data: string): string {
  return `id:${id}\nevent:result\n:HTTP_STATUS/200\ndata:${data}\n\n`;
}

interface Reply {
  requestId: string;
  audioId: string;
  stored: StoredResult;
  characters: number;
  usage: boolean;
}

function body(reply: Reply, audio: { data: string; final: boolean }) {
  return {
    output: {
      finish_reason: audio.final ? "stop" : "null",
      audio: {
        ...(audio.final ? { url: reply.stored.url } : {}),
        data: audio.data,
        id: reply.audioId,
        expires_at: reply.stored.expiresAt,
      },
    },
    ...(reply.usage ? { usage: { characters: reply.characters } } : {}),
    request_id: reply.requestId,
  };
}

async function writeStream(
  response: ServerResponse,
  samples: Int16Array,
  meta: Reply,
  context: MultimodalContext,
): Promise<void> {
  response.writeHead(200, {
    "content-type": "text/event-stream;charset=UTF-8",
    "cache-control": "no-cache",
    "x-request-id": meta.requestId,
  });
  response.flushHeaders();
  const pcm = pcmBytes(samples);
  const step = STREAM_CHUNK_SAMPLES * 2;
  const events = Math.ceil(pcm.length / step);
  const { fault, signal } = context;
  for (let i = 0; i <= events; i++) {
    if (i > 0 && !(await sleep(fault.chunkDelayMs ?? 0, signal))) return;
    if (i === fault.dropAfter) {
      context.state.markDropped(response);
      response.socket?.destroy();
      return;
    }
    if (i === fault.malformedAfter) {
      if (await writeFlushed(response, dashScopeEvent(i + 1, '{"output":{"audio":'))) {
        response.end();
      }
      return;
    }
    const data =
      i < events
        ? JSON.stringify(
            body(meta, {
              data: pcm.subarray(i * step, (i + 1) * step).toString("base64"),
              final: false,
            }),
          )
        : JSON.stringify(body(meta, { data: "", final: true }));
    if (!(await writeFlushed(response, dashScopeEvent(i + 1, data)))) return;
  }
  response.end();
}

async function handleSpeech(
  request: FastifyRequest,
  reply: FastifyReply,
  context: MultimodalContext,
): Promise<FastifyReply | undefined> {
  const parsed = parseTtsRequest(context.body);
  if (!parsed.ok) {
    const { code, message } = parsed.error;
    return sendDashScopeError(reply, 400, dashScopeError(code, message, context.requestId));
  }
  const tts = parsed.request;
  const spoken = stripDirectives(tts.text).trim();
  const { samples } = await synthesizeSpeech({
    text: spoken,
    voice: tts.voice,
    languageType: tts.languageType,
  });
  if (context.signal.aborted) {
    reply.hijack();
    return undefined;
  }
  const meta: Reply = {
    requestId: context.requestId,
    audioId: `audio_${context.requestId.replaceAll("-", "")}`,
    stored: resultStoreFor(context.state).put(
      wavFile(samples, TTS_SAMPLE_RATE),
      requestOrigin(request),
    ),
    characters: tts.characters,
    usage: !context.fault.noUsage,
  };
  if (request.headers["x-dashscope-sse"] === "enable") {
    reply.hijack();
    await writeStream(reply.raw, samples, meta, context);
    return undefined;
  }
  if (context.fault.dropAfter !== undefined) {
    reply.hijack();
    context.state.markDropped(reply.raw);
    reply.raw.socket?.destroy();
    return undefined;
  }
  return reply
    .code(200)
    .header("x-request-id", meta.requestId)
    .send(body(meta, { data: "", final: true }));
}

export const speechHandler: MultimodalHandler = {
  serves: (model) => model.startsWith("qwen3-tts"),
  handle: handleSpeech,
};
