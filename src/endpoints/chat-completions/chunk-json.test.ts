import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { textChunkWriter } from "./chunk-json.ts";

describe("textChunkWriter", () => {
  it("writes exactly what JSON.stringify makes of the chunk object, for any text and names", () => {
    fc.assert(
      fc.property(
        fc.record({
          id: fc.string(),
          created: fc.integer({ min: 0, max: 2 ** 40 }),
          model: fc.string(),
          includeUsage: fc.boolean(),
        }),
        fc.constantFrom("content" as const, "reasoning_content" as const),
        fc.string({ unit: "grapheme" }),
        fc.nat({ max: 8 }),
        (head, key, text, choice) => {
          const expected = JSON.stringify({
            id: head.id,
            object: "chat.completion.chunk",
            created: head.created,
            model: head.model,
            choices: [
              { index: choice, delta: { [key]: text }, logprobs: null, finish_reason: null },
            ],
            ...(head.includeUsage ? { usage: null } : {}),
          });
          expect(textChunkWriter(head)(key, text, choice)).toBe(expected);
        },
      ),
    );
  });
});
