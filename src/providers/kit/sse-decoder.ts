/**
 * @module providers/kit/sse-decoder
 * Decodes a Server-Sent Events byte stream into `{event, data}` records (WHATWG rules: `field:`
 * with an optional space, comment lines starting with `:`, blank line ends an event).
 */

export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

export async function* decodeSse(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event: string | undefined;
  let id: string | undefined;
  let data: string[] = [];

  function* flushLine(line: string): Generator<SseEvent> {
    if (line === "") {
      if (data.length > 0) yield { event, data: data.join("\n"), id };
      event = undefined;
      data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id") id = value;
  }

  for await (const chunk of chunks) {
    buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r\n|\r|\n/);
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      const width = buffer.startsWith("\r\n", newline) ? 2 : 1;
      buffer = buffer.slice(newline + width);
      yield* flushLine(line);
      newline = buffer.search(/\r\n|\r|\n/);
    }
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield* flushLine(buffer);
  yield* flushLine("");
}
