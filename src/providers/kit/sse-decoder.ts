/**
 * @module providers/kit/sse-decoder
 * Decodes a Server-Sent Events byte stream into `{event, data}` records (WHATWG rules: `field:`
 * with an optional space, comment lines starting with `:`, blank line ends an event; lines end
 * with CRLF, LF or CR). Runs once per line of every upstream stream, so it scans with indexOf
 * and keeps no per-line generators.
 */

export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

class EventBuilder {
  event: string | undefined;
  id: string | undefined;
  data: string[] = [];

  /** Takes one line; returns the event a blank line completes. */
  line(line: string): SseEvent | undefined {
    if (line === "") {
      const done =
        this.data.length > 0
          ? { event: this.event, data: this.data.join("\n"), id: this.id }
          : undefined;
      this.event = undefined;
      this.data = [];
      return done;
    }
    if (line.charCodeAt(0) === 58 /* ":" */) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* " " */) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
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

export async function* decodeSse(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const builder = new EventBuilder();
  let buffer = "";
  const take = function* (final: boolean): Generator<SseEvent> {
    let start = 0;
    for (let end = lineEnd(buffer, 0); end !== -1; end = lineEnd(buffer, start)) {
      const next = afterLineEnd(buffer, end, final);
      if (next === -1) break;
      const event = builder.line(buffer.slice(start, end));
      start = next;
      if (event) yield event;
    }
    buffer = start === 0 ? buffer : buffer.slice(start);
  };
  for await (const chunk of chunks) {
    buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    yield* take(false);
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
