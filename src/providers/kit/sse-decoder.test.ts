import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { decodeSseBatches, type SseEvent } from "./sse-decoder.ts";

/** The events one by one, in the order the batches hold them (none of which is empty). */
async function* decodeSse(chunks: AsyncIterable<Buffer | string>, limit?: number) {
  for await (const batch of decodeSseBatches(chunks, limit)) {
    expect(batch.length).toBeGreaterThan(0);
    yield* batch;
  }
}

async function decode(chunks: string[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  async function* source() {
    for (const chunk of chunks) yield Buffer.from(chunk);
  }
  for await (const event of decodeSse(source())) events.push(event);
  return events;
}

const text = (events: SseEvent[]) => events.map((event) => [event.event, event.data]);

describe("decodeSse", () => {
  it("reads events with LF, CRLF and CR line ends, named and unnamed", async () => {
    const stream = 'data: {"a":1}\n\nevent: ping\r\ndata: x\r\n\r\ndata: y\rdata: z\r\r';
    expect(text(await decode([stream]))).toEqual([
      [undefined, '{"a":1}'],
      ["ping", "x"],
      [undefined, "y\nz"],
    ]);
  });

  it("gives the same events whatever the chunking, even a CRLF split across chunks", async () => {
    const stream = "event: a\r\ndata: 1\r\n\r\n: comment\r\ndata:2\r\n\r\ndata: [DONE]\n\n";
    const whole = text(await decode([stream]));
    expect(whole).toEqual([
      ["a", "1"],
      [undefined, "2"],
      [undefined, "[DONE]"],
    ]);
    for (let cut = 1; cut < stream.length; cut++) {
      expect(text(await decode([stream.slice(0, cut), stream.slice(cut)]))).toEqual(whole);
    }
    expect(text(await decode([...stream]))).toEqual(whole);
  });

  it("ends a last event that has no blank line after it, and splits multi-byte characters safely", async () => {
    const bytes = Buffer.from("data: héllo ✓");
    async function* source() {
      for (const byte of bytes) yield Buffer.from([byte]);
    }
    const events: SseEvent[] = [];
    for await (const event of decodeSse(source())) events.push(event);
    expect(text(events)).toEqual([[undefined, "héllo ✓"]]);
  });

  it("keeps the id field and ignores unknown fields", async () => {
    const [event] = await decode(["id: 7\nretry: 10\nfoo\ndata: a\n\n"]);
    expect(event).toEqual({ event: undefined, data: "a", id: "7" });
  });
});

describe("decodeSse bounds", () => {
  async function fail(chunks: AsyncIterable<string>, limit: number): Promise<unknown> {
    try {
      for await (const _event of decodeSse(chunks, limit)) {
        // read on
      }
    } catch (error) {
      return error;
    }
    return undefined;
  }

  it("fails an endless line once it is longer than the limit, without reading further", async () => {
    let sent = 0;
    async function* endless() {
      yield "data: {}\n\n";
      for (;;) {
        sent++;
        yield "x".repeat(100);
      }
    }
    const error = await fail(endless(), 1000);
    expect(UpstreamError.isInstance(error) && error.kind).toBe("too_large");
    expect(sent).toBeLessThanOrEqual(11);
  });

  it("fails an event whose data lines add up to more than the limit", async () => {
    async function* lines() {
      for (let i = 0; i < 100; i++) yield `data: ${"y".repeat(50)}\n`;
      yield "\n";
    }
    const error = await fail(lines(), 1000);
    expect(UpstreamError.isInstance(error) && error.kind).toBe("too_large");
  });

  it("reads events just under the limit, a long line arriving in small pieces included", async () => {
    const long = "z".repeat(5000);
    async function* pieces() {
      for (let i = 0; i < long.length; i += 7)
        yield `${i === 0 ? "data: " : ""}${long.slice(i, i + 7)}`;
      yield "\r";
      yield "\n\r\n";
    }
    const events: SseEvent[] = [];
    for await (const event of decodeSse(pieces(), 6000)) events.push(event);
    expect(events.map((event) => event.data)).toEqual([long]);
  });

  it("agrees with a plain reading of the whole text, for any lines cut anywhere", async () => {
    /** The WHATWG rules applied to the whole text at once, line by line. */
    function reference(whole: string): SseEvent[] {
      const events: SseEvent[] = [];
      let event: string | undefined;
      let id: string | undefined;
      let data: string[] = [];
      const dispatch = () => {
        if (data.length > 0) events.push({ event, data: data.join("\n"), id });
        event = undefined;
        data = [];
      };
      const lines = whole.split(/\r\n|\r|\n/);
      // Text after the last line end is a line too (the stream ended); a trailing empty string
      // is not.
      if (lines.at(-1) === "") lines.pop();
      for (const line of lines) {
        if (line === "") {
          dispatch();
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
        else if (field === "id") id = value;
      }
      dispatch();
      return events;
    }
    const line = fc.oneof(
      fc.constant(""),
      fc.string().map((value) => `data: ${value.replace(/[\r\n]/g, "")}`),
      fc.string().map((value) => `data:${value.replace(/[\r\n]/g, "")}`),
      fc.constantFrom("data", "event: ping", "id: 7", "id", ": comment", "retry: 5", "eventx: y"),
    );
    const ending = fc.constantFrom("\n", "\r\n", "\r");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(line, ending), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (lines, cuts) => {
          const whole = lines.map(([body, end]) => body + end).join("");
          const points = [...new Set(cuts.map((cut) => cut % (whole.length + 1)))].sort(
            (a, b) => a - b,
          );
          const chunks = [0, ...points, whole.length]
            .slice(1)
            .map((end, index, ends) => whole.slice(index === 0 ? 0 : ends[index - 1], end));
          expect(await decode(chunks)).toEqual(reference(whole));
        },
      ),
    );
  });
});

describe("decodeSseBatches", () => {
  async function batches(chunks: string[], limit?: number) {
    async function* source() {
      for (const chunk of chunks) yield Buffer.from(chunk);
    }
    const out: SseEvent[][] = [];
    let failure: unknown;
    try {
      for await (const batch of decodeSseBatches(source(), limit)) out.push(batch);
    } catch (error) {
      failure = error;
    }
    return { out, failure };
  }

  it("gives one batch per read that completes events, never an empty one, in order", async () => {
    const reads = [
      'data: {"a":1}\n\ndata: {"b":2}\n\nda',
      "ta: 3",
      "\n\n: only a comment\n",
      "data: [DONE]\n\n",
    ];
    const { out } = await batches(reads);
    expect(out.map(text)).toEqual([
      [
        [undefined, '{"a":1}'],
        [undefined, '{"b":2}'],
      ],
      [[undefined, "3"]],
      [[undefined, "[DONE]"]],
    ]);
    expect(out.flat()).toEqual(await decode([reads.join("")]));
  });

  it("hands on a read's events before an event over the bound in the same read fails it", async () => {
    const { out, failure } = await batches([`data: 1\n\ndata: ${"x".repeat(64)}\n\n`], 32);
    expect(out.map(text)).toEqual([[[undefined, "1"]]]);
    expect(failure).toBeInstanceOf(UpstreamError);
  });
});
