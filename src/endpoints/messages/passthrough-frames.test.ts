/**
 * The native Messages relay: events the adapter passed on as text reach the client byte for
 * byte, `message_start` names the model the client asked for, and what was delivered — read
 * from the text deltas only when the count is needed — is the same as reading every event.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DeliveredText } from "../../billing/index.ts";
import type { PassthroughEvent, PassthroughTextEvent } from "../../spec/index.ts";
import {
  type PassthroughState,
  passthroughFrames,
  readUnreadDeltas,
} from "./passthrough-frames.ts";

const state = (): PassthroughState => ({
  delivered: new DeliveredText(),
  unread: [],
  failed: false,
});

/** Relays `events` arriving in reads of `size` events each; the frames, flattened, in order. */
async function relay(
  events: Array<PassthroughEvent | PassthroughTextEvent>,
  into: PassthroughState,
  size = 1,
) {
  async function* reads() {
    for (let at = 0; at < events.length; at += size) yield events.slice(at, at + size);
  }
  const frames = [];
  for await (const batch of passthroughFrames(reads(), "claude-asked", into)) {
    expect(batch.length).toBeGreaterThan(0);
    frames.push(...batch);
  }
  return frames;
}

const delta = (delta: Record<string, unknown>) =>
  JSON.stringify({ type: "content_block_delta", index: 0, delta });

describe("passthroughFrames", () => {
  it("passes text events on as sent, renames the model, and counts content events only when asked", async () => {
    const raw = delta({ type: "text_delta", text: "Hello there" });
    const into = state();
    const frames = await relay(
      [
        { event: "message_start", data: { type: "message_start", message: { model: "up" } } },
        { event: "content_block_start", json: '{"type":"content_block_start","index":0}' },
        { event: "content_block_delta", json: raw },
        { event: "message_stop", data: { type: "message_stop" } },
      ],
      into,
    );
    expect(frames[0]).toEqual({
      event: "message_start",
      data: { type: "message_start", message: { model: "claude-asked" } },
    });
    expect(frames[2]).toEqual({ event: "content_block_delta", data: undefined, json: raw });
    expect(into.delivered.characters).toBe(0);
    expect(into.unread).toEqual(['{"type":"content_block_start","index":0}', raw]);
    readUnreadDeltas(into);
    expect(into.unread).toEqual([]);
    expect(into.delivered.characters).toBe("Hello there".length);
  });

  it("counts the same delivered text whether the deltas came parsed or as text", async () => {
    const piece = fc.record({
      kind: fc.constantFrom("text", "thinking", "partial_json"),
      value: fc.string(),
      asText: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 10 }), async (pieces) => {
        const parsed = state();
        const mixed = state();
        const events = (asText: (index: number) => boolean) =>
          pieces.map((piece, index): PassthroughEvent | PassthroughTextEvent => {
            const body = { [piece.kind]: piece.value };
            return asText(index)
              ? { event: "content_block_delta", json: delta(body) }
              : { event: "content_block_delta", data: JSON.parse(delta(body)) };
          });
        await relay(
          events(() => false),
          parsed,
        );
        const frames = await relay(
          events((index) => pieces[index]!.asText),
          mixed,
        );
        // However the reads fall, the same frames and the same count.
        const together = state();
        expect(
          await relay(
            events((index) => pieces[index]!.asText),
            together,
            3,
          ),
        ).toEqual(frames);
        readUnreadDeltas(together);
        expect(together.delivered.characters).toBe(parsed.delivered.characters);
        readUnreadDeltas(mixed);
        expect(mixed.delivered.characters).toBe(parsed.delivered.characters);
        expect(await mixed.delivered.tokens()).toBe(await parsed.delivered.tokens());
      }),
      { numRuns: 50 },
    );
  });
});
