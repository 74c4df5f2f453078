import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatChunkStreamPart } from "../../spec/index.ts";
import { passThroughChunks, renameMembers } from "./openai-chunk-passthrough.ts";

const REWRITE = { id: "chatcmpl-gateway", model: "gpt-4o-mini", usageNulls: false };

function chunk(fields: Record<string, unknown>, choices: unknown[], usage: unknown = null) {
  return JSON.stringify({
    id: "chatcmpl-upstream",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-4o-mini-2024-07-18",
    ...fields,
    choices,
    usage,
  });
}
const delta = (content: string) => [
  { index: 0, delta: { content }, logprobs: null, finish_reason: null },
];
const finish = (reason: string) => [{ index: 0, delta: {}, logprobs: null, finish_reason: reason }];
const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };

/**
 * Passes `data` through, the events arriving in reads of `sizes` events each (the last size
 * repeats; one event per read by default). `parts` lists what came out, in order.
 */
async function collect(
  data: string[],
  rewrite = REWRITE,
  sizes: number[] = [1],
): Promise<{ chunks: string[]; finish: ChatChunkStreamPart | undefined; parts: string[][] }> {
  async function* reads() {
    let at = 0;
    for (let read = 0; at < data.length; read++) {
      const size = Math.max(1, sizes[Math.min(read, sizes.length - 1)] ?? 1);
      yield data.slice(at, at + size).map((item) => ({ data: item }));
      at += size;
    }
  }
  const chunks: string[] = [];
  const parts: string[][] = [];
  let end: ChatChunkStreamPart | undefined;
  try {
    for await (const part of passThroughChunks(reads(), rewrite, 1)) {
      if (part.type === "chunks") {
        expect(part.json.length).toBeGreaterThan(0);
        parts.push(part.json);
        chunks.push(...part.json);
      } else end = part;
    }
  } catch (error) {
    Object.assign(error as object, { delivered: chunks });
    throw error;
  }
  return { chunks, finish: end, parts };
}

const stream = (contents: string[]) => [
  chunk({}, [
    { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
  ]),
  ...contents.map((content) => chunk({}, delta(content))),
  chunk({}, finish("stop")),
  chunk({}, [], usage),
  "[DONE]",
];

describe("passThroughChunks", () => {
  it("renames id and model, keeps everything else, and keeps back the usage-only chunk", async () => {
    const { chunks, finish: end } = await collect(stream(["Hel", "lo"]));
    expect(chunks).toHaveLength(4);
    const parsed = chunks.map((json) => JSON.parse(json));
    for (const item of parsed) {
      expect(item.id).toBe("chatcmpl-gateway");
      expect(item.model).toBe("gpt-4o-mini");
      expect(item).not.toHaveProperty("usage");
    }
    expect(parsed.map((item) => item.choices[0].delta.content ?? null)).toEqual([
      "",
      "Hel",
      "lo",
      null,
    ]);
    expect(parsed[3].choices[0].finish_reason).toBe("stop");
    expect(end).toMatchObject({ type: "finish", finishReason: "stop" });
    expect(end?.type === "finish" && end.usage?.output.total).toBe(3);
  });

  it("passes an ordinary chunk through byte for byte apart from the names", async () => {
    const { chunks } = await collect(stream(["abc"]), { ...REWRITE, usageNulls: true });
    expect(chunks[1]).toBe(chunk({ id: "chatcmpl-gateway", model: "gpt-4o-mini" }, delta("abc")));
  });

  it("maps a vendor's own finish reason onto OpenAI's", async () => {
    const data = stream(["x"]);
    data[2] = chunk({}, finish("insufficient_system_resource"));
    const { chunks, finish: end } = await collect(data);
    expect(JSON.parse(chunks[2]!).choices[0].finish_reason).toBe("stop");
    expect(end).toMatchObject({ finishReason: "other" });
  });

  it("refuses a chunk cut in half, even one that names the id and model", async () => {
    const whole = chunk({}, delta("never complete"));
    const data = stream(["a"]);
    data.splice(2, 0, whole.slice(0, whole.length - 10));
    await expect(collect(data)).rejects.toThrow(/malformed/);
  });

  it("hands on the chunks of one read together, the same chunks however the reads fall", async () => {
    const data = stream(["a", "b", "c", "d"]);
    const one = await collect(data);
    expect(one.parts.map((part) => part.length)).toEqual([1, 1, 1, 1, 1, 1]);
    const all = await collect(data, REWRITE, [data.length]);
    expect(all.parts).toEqual([one.chunks]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1 }),
        async (sizes) => {
          const split = await collect(data, REWRITE, sizes);
          expect(split.chunks).toEqual(one.chunks);
          expect(split.finish).toEqual(one.finish);
        },
      ),
    );
  });

  it("hands on what a read held before a malformed chunk, then fails", async () => {
    const data = stream(["a", "b"]);
    data.splice(3, 0, "{not json");
    const failure = await collect(data, REWRITE, [data.length]).catch((error: unknown) => error);
    expect(String(failure)).toMatch(/malformed/);
    const delivered = (failure as { delivered: string[] }).delivered;
    expect(delivered.map((json) => JSON.parse(json).choices[0].delta.content)).toEqual([
      "",
      "a",
      "b",
    ]);
  });

  it("turns an error chunk into an upstream error", async () => {
    const data = stream(["a"]);
    data.splice(2, 0, JSON.stringify({ error: { message: "overloaded", code: "server_error" } }));
    await expect(collect(data)).rejects.toThrow(/overloaded/);
  });

  it("fails a stream that ends before any finish reason", async () => {
    await expect(collect(stream(["a"]).slice(0, 2))).rejects.toThrow(/ended before/);
  });

  it("reads a vendor that writes spaces the slow way, with the same result", async () => {
    const spaced = stream(["a", "b"]).map((data) =>
      data === "[DONE]" ? data : JSON.stringify(JSON.parse(data), null, 1),
    );
    const { chunks, finish: end } = await collect(spaced);
    expect(chunks.map((json) => JSON.parse(json).choices[0].delta.content ?? null)).toEqual([
      "",
      "a",
      "b",
      null,
    ]);
    expect(end).toMatchObject({ finishReason: "stop" });
  });

  it("delivers any content unchanged, whatever it spells", async () => {
    const hostile = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '"finish_reason":"stop"',
        '"usage":{"prompt_tokens":1}',
        '"error":{}',
        '"id":"chatcmpl-upstream"',
        '"model":"gpt-4o-mini-2024-07-18"',
        "}",
        "\\",
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { maxLength: 8 }), async (contents) => {
        const { chunks, finish: end } = await collect(stream(contents));
        const seen = chunks.map((json) => JSON.parse(json));
        expect(seen.slice(1, -1).map((item) => item.choices[0].delta.content)).toEqual(contents);
        for (const item of seen)
          expect([item.id, item.model]).toEqual(["chatcmpl-gateway", "gpt-4o-mini"]);
        expect(end).toMatchObject({ finishReason: "stop" });
      }),
    );
  });

  it("renames in one pass exactly what one replacement after another would", () => {
    const member = (name: string, value: string) => `"${name}":${JSON.stringify(value)}`;
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.string(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (id, model, content, modelFirst, usageNull, drop) => {
          const fields = modelFirst
            ? { model, id, choices: [{ delta: { content } }] }
            : { id, choices: [{ delta: { content } }], model };
          const data = JSON.stringify(usageNull ? { ...fields, usage: null } : fields);
          const upstreamId = member("id", id);
          const upstreamModel = member("model", model);
          const ourId = member("id", "chatcmpl-gateway");
          const ourModel = member("model", "gpt-4o-mini");
          const chained = data.replace(upstreamId, ourId).replace(upstreamModel, ourModel);
          const expected = drop ? chained.replace(',"usage":null', "") : chained;
          expect(renameMembers(data, upstreamId, ourId, upstreamModel, ourModel, drop)).toBe(
            expected,
          );
          expect(JSON.parse(expected)).toMatchObject({
            id: "chatcmpl-gateway",
            model: "gpt-4o-mini",
          });
        },
      ),
    );
  });
});
