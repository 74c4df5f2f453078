/**
 * @module providers/kit/sse-decoder
 * Decodes a Server-Sent Events byte stream into `{event, data}` records (WHATWG rules: `field:`
 * with an optional space, comment lines starting with `:`, blank line ends an event; lines end
 * with CRLF, LF or CR). Runs once per line of every upstream stream, so it scans with indexOf
 * and slices a line's value straight out of the buffer (no per-line string or generator), and
 * hands out the events per read (`decodeSseBatches`). One line, and one event's data, are
 * bounded (`maxEventChars`): a vendor sending an endless line fails the stream with an
 * `UpstreamError` of kind `too_large` instead of growing the buffer without end.
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
  /** The event's first data line, and the further ones (rare: most events have one). */
  #data: string | undefined;
  #moreData: string[] | undefined;
  #dataChars = 0;

  constructor(readonly limit: number) {}

  /** Takes the line `text[start, end)`; returns the event a blank line completes. */
  line(text: string, start: number, end: number): SseEvent | undefined {
    if (start === end) {
      const data = this.#moreData ? [this.#data, ...this.#moreData].join("\n") : this.#data;
      const done = data !== undefined ? { event: this.event, data, id: this.id } : undefined;
      this.event = undefined;
      this.#data = undefined;
      this.#moreData = undefined;
      this.#dataChars = 0;
      return done;
    }
    if (text.charCodeAt(start) === 58 /* ":" */) return undefined;
    let colon = text.indexOf(":", start);
    if (colon >= end) colon = -1;
    const fieldLength = (colon === -1 ? end : colon) - start;
    let valueStart = colon === -1 ? end : colon + 1;
    if (valueStart < end && text.charCodeAt(valueStart) === 32 /* " " */) valueStart++;
    if (fieldLength === 4 && text.startsWith("data", start)) {
      this.#dataChars += end - valueStart + 1;
      if (this.#dataChars > this.limit) throw eventTooLarge(this.limit);
      const value = text.slice(valueStart, end);
      if (this.#data === undefined) this.#data = value;
      else if (this.#moreData) this.#moreData.push(value);
      else this.#moreData = [value];
    } else if (fieldLength === 5 && text.startsWith("event", start))
      this.event = text.slice(valueStart, end);
    else if (fieldLength === 2 && text.startsWith("id", start))
      this.id = text.slice(valueStart, end);
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

/**
 * The events of a body, as the arrays that each read of it completes (never empty): a consumer
 * takes a read's events in a plain loop and pays one asynchronous step per read instead of one
 * per event — an upstream usually writes a whole answer in a few reads.
 */
export async function* decodeSseBatches(
  chunks: AsyncIterable<Buffer | string>,
  maxEventChars = MAX_SSE_EVENT_CHARS,
): AsyncGenerator<SseEvent[]> {
  const decoder = new TextDecoder();
  const builder = new EventBuilder(maxEventChars);
  let buffer = "";
  /** Where the unread part of `buffer` starts. */
  let start = 0;
  /** `buffer` from `start` up to here holds no line end: a long line arriving in small chunks
   * is scanned once, not once per chunk. */
  let scanFrom = 0;
  /** The next event the buffer completes, or null when it holds no further whole line. */
  const nextEvent = (final: boolean): SseEvent | null => {
    for (;;) {
      const end = lineEnd(buffer, scanFrom);
      if (end === -1) {
        scanFrom = buffer.length;
        return null;
      }
      const next = afterLineEnd(buffer, end, final);
      if (next === -1) {
        scanFrom = end;
        return null;
      }
      const event = builder.line(buffer, start, end);
      start = next;
      scanFrom = next;
      if (event) return event;
    }
  };
  const compact = () => {
    if (start === 0) return;
    buffer = buffer.slice(start);
    scanFrom -= start;
    start = 0;
  };
  // The events a read completed go out before a failure that comes later in the same read (an
  // event over the bound), as they would one by one.
  let events: SseEvent[] = [];
  try {
    for await (const chunk of chunks) {
      buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      for (let event = nextEvent(false); event !== null; event = nextEvent(false))
        events.push(event);
      compact();
      if (events.length > 0) {
        const complete = events;
        events = [];
        yield complete;
      }
      // What is left is one unfinished line.
      if (buffer.length > maxEventChars) throw eventTooLarge(maxEventChars);
    }
    buffer += decoder.decode();
    for (let event = nextEvent(true); event !== null; event = nextEvent(true)) events.push(event);
    compact();
    if (buffer.length > 0) {
      const event = builder.line(buffer, 0, buffer.length);
      if (event) events.push(event);
    }
    const last = builder.line("", 0, 0);
    if (last) events.push(last);
  } catch (error) {
    if (events.length > 0) yield events;
    throw error;
  }
  if (events.length > 0) yield events;
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
