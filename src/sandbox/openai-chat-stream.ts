/**
 * @module sandbox/openai-chat-stream
 * Writes an OpenAI chat stream onto the raw response: SSE headers, one `data:` frame per chunk,
 * `data: [DONE]`, and the stream faults (`chunk-delay`, `drop`, `malformed`).
 */
import type { ServerResponse } from "node:http";
import type { JsonRecord } from "./chat-request.ts";
import { sleep, writeFlushed } from "./connection.ts";
import { sseFrame } from "./openai-shapes.ts";

export interface StreamFaults {
  chunkDelayMs: number;
  /** Destroy the socket after this many data frames (at most before `[DONE]`). */
  dropAfter: number | undefined;
  /** After this many data frames send one non-JSON frame and end (at most before `[DONE]`). */
  malformedAfter: number | undefined;
}

export interface StreamHooks {
  /** Fires when the client goes away; the writer stops. */
  signal: AbortSignal;
  /** Called just before the sandbox cuts the connection for `drop`. */
  onDrop(): void;
}

export const DONE_FRAME = sseFrame("[DONE]");

/** Data of the `malformed` frame: the next chunk's JSON cut in half, so it never parses. */
export function malformedData(next: JsonRecord | undefined): string {
  const json = JSON.stringify(next ?? { id: "chatcmpl-malformed", choices: [] });
  return json.slice(0, Math.floor(json.length / 2));
}

/**
 * Sends the stream. Frame i (0-based) is chunk i, and frame `chunks.length` is `[DONE]`; `drop=n`
 * and `malformed=n` replace frame min(n, chunks.length). `chunk-delay` waits before every frame
 * but the first.
 */
export async function writeChatStream(
  response: ServerResponse,
  headers: Record<string, string>,
  chunks: readonly JsonRecord[],
  faults: StreamFaults,
  hooks: StreamHooks,
): Promise<void> {
  response.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  response.flushHeaders();
  const dropAt = faults.dropAfter === undefined ? -1 : Math.min(faults.dropAfter, chunks.length);
  const malformedAt =
    faults.malformedAfter === undefined ? -1 : Math.min(faults.malformedAfter, chunks.length);

  for (let i = 0; i <= chunks.length; i++) {
    if (i > 0 && !(await sleep(faults.chunkDelayMs, hooks.signal))) return;
    if (i === dropAt) {
      hooks.onDrop();
      response.socket?.destroy();
      return;
    }
    if (i === malformedAt) {
      if (await writeFlushed(response, sseFrame(malformedData(chunks[i])))) response.end();
      return;
    }
    const frame = i < chunks.length ? sseFrame(JSON.stringify(chunks[i])) : DONE_FRAME;
    if (!(await writeFlushed(response, frame))) return;
  }
  response.end();
}
