/**
 * @module sandbox/gemini-stream
 * Writes a Gemini `streamGenerateContent` response onto the raw response, in either of Google's
 * two framings: SSE (`?alt=sse`, one `data:` event per chunk, no end sentinel) or a JSON array
 * written element by element. Applies the stream faults `chunk-delay`, `drop` and `malformed`.
 */
import type { ServerResponse } from "node:http";
import type { JsonRecord } from "./chat-request.ts";
import { sleep, writeFlushed } from "./connection.ts";
import type { StreamFaults, StreamHooks } from "./openai-chat-stream.ts";

export type GeminiFraming = "sse" | "json-array";

/** Half of the chunk's JSON, so it never parses. */
export function cutJson(chunk: JsonRecord | undefined): string {
  const json = JSON.stringify(chunk ?? { candidates: [] });
  return json.slice(0, Math.floor(json.length / 2));
}

function frame(framing: GeminiFraming, index: number, json: string): string {
  if (framing === "sse") return `data: ${json}\r\n\r\n`;
  return `${index === 0 ? "[" : ",\r\n"}${json}`;
}

/**
 * Sends the stream. Chunk i (0-based) is frame i. Gemini has no end sentinel, so `drop=n` and
 * `malformed=n` act on frame min(n, last chunk): the chunk with `finishReason` never arrives
 * intact. `chunk-delay` waits before every frame but the first.
 */
export async function writeGeminiStream(
  response: ServerResponse,
  headers: Record<string, string>,
  framing: GeminiFraming,
  chunks: readonly JsonRecord[],
  faults: StreamFaults,
  hooks: StreamHooks,
): Promise<void> {
  response.writeHead(200, {
    ...headers,
    "content-type":
      framing === "sse" ? "text/event-stream; charset=utf-8" : "application/json; charset=UTF-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  response.flushHeaders();
  const last = chunks.length - 1;
  const dropAt = faults.dropAfter === undefined ? -1 : Math.min(faults.dropAfter, last);
  const malformedAt =
    faults.malformedAfter === undefined ? -1 : Math.min(faults.malformedAfter, last);

  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && !(await sleep(faults.chunkDelayMs, hooks.signal))) return;
    if (i === dropAt) {
      hooks.onDrop();
      response.socket?.destroy();
      return;
    }
    if (i === malformedAt) {
      if (await writeFlushed(response, frame(framing, i, cutJson(chunks[i])))) response.end();
      return;
    }
    if (!(await writeFlushed(response, frame(framing, i, JSON.stringify(chunks[i]))))) return;
  }
  if (framing === "json-array" && !(await writeFlushed(response, chunks.length ? "]" : "[]")))
    return;
  response.end();
}
