/**
 * @module providers/kit/sse-decoder
 * Decodes a Server-Sent Events byte stream into `{event, data}` records (WHATWG rules: `field:`
 * with an optional space, comment lines starting with `:`, blank line ends an event; lines end
 * with CRLF, LF or CR). Runs once per line of every upstream stream, so it scans with indexOf
 * and keeps no per-line generators. One line, and one event's data, are bounded
 * (`maxEventChars`): a vendor sending an endless line fails the stream with an `UpstreamError`
 * of kind `too_large` instead of growing the buffer without end.
 */
import { UpstreamError } from "../../spec/index.ts";

/** The default bound of one line and of one event's data, in characters (16 Mi). */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

function eventTooLarge(limit: number): UpstreamError {
  return new UpstreamError({
    kind: "too_large",
    message: `Upstream sent a stream event longer than the gateway's limit of ${limit} characters.`,
  });
}

class EventBuilder {
  event: string | undefined;
  id: string | undefined;
  data: string[] = [];
  #dataChars = 0;

  constructor(readonly limit: number) {}

  /** Takes one line; returns the event a blank line completes. */
  line(line: string): SseEvent | undefined {
    if (line === "") {
      const done =
        this.data.length > 0
          ? { event: this.event, data: this.data.join("\n"), id: this.id }
          : undefined;
      this.event = undefined;
      this.data = [];
      this.#dataChars = 0;
      return done;
    }
    if (line.charCodeAt(0) === 58 /* ":" */) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* " " */) value = value.slice(1);
    if (field === "data") {
      this.#dataChars += value.length + 1;
      if (this.#dataChars > this.limit) throw eventTooLarge(this.limit);
      this.data.push(value);
    } else if (field === "event") this.event = value;
    else if (field === "id") this.id = value;
    return undefined;
  }
}

/** Index just past the line end at `end`; -1 when a lone CR ends the text (a LF may follow). */
function afterLineEnd(text: string, end: number, final: boolean): number {
  if (text.charCodeAt(end) === 10) return end + 1;
  if (end + 1 < text.length) return text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
  return final ? end + 1 : -1;
}

/** The first line end (CR or LF) at or after `from`, or -1. */
function lineEnd(text: string, from: number): number {
  const lf = text.indexOf("\n", from);
  const cr = text.indexOf("\r", from);
  if (cr === -1) return lf;
  return lf === -1 || cr < lf ? cr : lf;
}

export async function* decodeSse(
  chunks: AsyncIterable<Buffer | string>,
  maxEventChars = MAX_SSE_EVENT_CHARS,
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const builder = new EventBuilder(maxEventChars);
  let buffer = "";
  // `buffer` up to here holds no line end: a long line arriving in small chunks is scanned once,
  // not once per chunk.
  let scanFrom = 0;
  const take = function* (final: boolean): Generator<SseEvent> {
    let start = 0;
    let end = lineEnd(buffer, scanFrom);
    while (end !== -1) {
      const next = afterLineEnd(buffer, end, final);
      if (next === -1) break;
      const event = builder.line(buffer.slice(start, end));
      start = next;
      if (event) yield event;
      end = lineEnd(buffer, start);
    }
    scanFrom = (end === -1 ? buffer.length : end) - start;
    buffer = start === 0 ? buffer : buffer.slice(start);
  };
  for await (const chunk of chunks) {
    buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    yield* take(false);
    // What is left is one unfinished line.
    if (buffer.length > maxEventChars) throw eventTooLarge(maxEventChars);
  }
  buffer += decoder.decode();
  yield* take(true);
  if (buffer.length > 0) {
    const event = builder.line(buffer);
    if (event) yield event;
  }
  const last = builder.line("");
  if (last) yield last;
}

/** One event's data: a JSON object, else the stream is malformed. */
export function parseEventObject(data: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    throw new UpstreamError({
      kind: "protocol",
      message: "Upstream sent a malformed event.",
      cause: error,
    });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new UpstreamError({ kind: "protocol", message: "Upstream sent a malformed event." });
  return parsed as Record<string, unknown>;
}
