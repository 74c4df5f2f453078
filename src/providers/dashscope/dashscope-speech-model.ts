/**
 * @module providers/dashscope/dashscope-speech-model
 * Speech adapter for Qwen3-TTS on DashScope's native `multimodal-generation` endpoint.
 * By default it asks for the SSE stream and hands on 24 kHz 16-bit mono PCM as it arrives
 * (format `pcm`). With `transport: "url"`, or when the upstream answers JSON anyway, it reads
 * the WAV file the answer points to (without the API key: the result host is not DashScope) and
 * hands that on as it downloads (format `wav`). The gateway builds the client's container.
 */
import type { CallSignal, SpeechCallOptions, SpeechModel, SpeechResult } from "../../spec/index.ts";
import { UpstreamError } from "../../spec/index.ts";
import {
  type HttpClient,
  headerValue,
  toUpstreamError,
  type UpstreamResponse,
} from "../kit/http-client.ts";
import { postUpstream, readBodyText } from "../kit/upstream-call.ts";
import { readDashScopeError } from "./dashscope-error.ts";
import {
  inlineAudio,
  parseTtsBody,
  readTtsStream,
  type TtsBody,
  type TtsStreamReport,
} from "./dashscope-tts-response.ts";

export const TTS_PATH = "/services/aigc/multimodal-generation/generation";
/** Qwen3-TTS output: 24 kHz, 16-bit, mono. */
export const TTS_SAMPLE_RATE = 24_000;

export interface DashScopeSpeechConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
  provider?: string;
  /** `sse` (default): PCM as it is made. `url`: the finished WAV file, downloaded. */
  transport?: "sse" | "url";
}

/** The request body: instructions go in `input`, where public clients put them. */
export function buildTtsRequest(options: SpeechCallOptions): Record<string, unknown> {
  return {
    model: options.upstreamModel,
    input: {
      text: options.text,
      voice: options.voice,
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  };
}

/** Whether `url` is on the configured base URL's origin (the operator chose that host). */
function sameOrigin(url: string, baseUrl: string): boolean {
  try {
    return new URL(url).origin === new URL(baseUrl).origin;
  } catch {
    return false;
  }
}

async function* single(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

async function* chunksOf(
  response: UpstreamResponse,
  signal: CallSignal | undefined,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response.body) yield chunk;
  } catch (error) {
    throw toUpstreamError(error, signal);
  } finally {
    response.body.destroy();
  }
}

export class DashScopeSpeechModel implements SpeechModel {
  readonly specificationVersion = "switchyard-speech-1" as const;
  readonly provider: string;
  readonly #config: DashScopeSpeechConfig;

  constructor(config: DashScopeSpeechConfig) {
    this.#config = config;
    this.provider = config.provider ?? "dashscope";
  }

  async doSpeech(options: SpeechCallOptions): Promise<SpeechResult> {
    const sse = (this.#config.transport ?? "sse") === "sse";
    const response = await postUpstream(this.#config.http, `${this.#config.baseUrl}${TTS_PATH}`, {
      headers: {
        authorization: `Bearer ${this.#config.apiKey}`,
        "content-type": "application/json",
        ...(sse ? { "x-dashscope-sse": "enable", accept: "text/event-stream" } : {}),
      },
      body: JSON.stringify(buildTtsRequest(options)),
      signal: options.abortSignal,
      readError: readDashScopeError,
    });
    const contentType = headerValue(response.headers, "content-type") ?? "";
    if (contentType.includes("text/event-stream")) return this.#streamed(response, options);
    return this.#downloaded(response, options);
  }

  #streamed(response: UpstreamResponse, options: SpeechCallOptions): SpeechResult {
    const report: TtsStreamReport = {};
    return {
      audio: readTtsStream(response.body, report, options.abortSignal),
      format: "pcm",
      sampleRate: TTS_SAMPLE_RATE,
      // Known once the stream has ended (the last event carries the usage).
      get characters() {
        return report.characters;
      },
      get upstreamRequestId() {
        return report.requestId;
      },
      warnings: [],
    };
  }

  async #downloaded(response: UpstreamResponse, options: SpeechCallOptions): Promise<SpeechResult> {
    const body: TtsBody = parseTtsBody(await readBodyText(response, options.abortSignal));
    const base = {
      format: "wav" as const,
      characters: body.usage?.characters ?? undefined,
      upstreamRequestId: body.request_id,
      warnings: [],
    };
    const inline = inlineAudio(body);
    if (inline) return { ...base, audio: single(inline) };
    const url = body.output?.audio?.url;
    if (!url) {
      throw new UpstreamError({
        kind: "protocol",
        message: "DashScope answered without audio (no output.audio.url).",
        body,
      });
    }
    // The result host is object storage, not DashScope: never send it the API key. A URL
    // off the configured host is vetted (public addresses only) before it is fetched.
    const init = { headers: {}, signal: options.abortSignal };
    const file = sameOrigin(url, this.#config.baseUrl)
      ? await this.#config.http.get(url, init)
      : await this.#config.http.download(url, init);
    if (file.status >= 300) {
      const detail = (await file.body.text().catch(() => "")).slice(0, 200);
      throw new UpstreamError({
        kind: "http",
        status: 502,
        message:
          `Downloading the synthesized audio failed with HTTP ${file.status}. ${detail}`.trim(),
        upstreamRequestId: body.request_id,
      });
    }
    return { ...base, audio: chunksOf(file, options.abortSignal) };
  }
}
