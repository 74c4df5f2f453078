/**
 * The delivered count of passed-through chat chunks: whatever a vendor writes, counting a chunk
 * never throws (a count that throws would make a delivered stream free), and text in any of the
 * shapes vendors use is counted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DeliveredText } from "../../billing/index.ts";
import { addDelivered } from "./passthrough-stream.ts";

const counted = (chunk: unknown) => {
  const delivered = new DeliveredText();
  addDelivered(JSON.stringify(chunk), delivered);
  return delivered.characters;
};

describe("addDelivered", () => {
  it("never throws, whatever the chunk's shape", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (choices, delta) => {
        counted({ choices });
        counted({ choices: [delta, null, { delta }] });
        counted({ choices: [{ delta: { tool_calls: delta, content: delta } }] });
      }),
    );
  });

  it("counts text in every shape vendors write it", () => {
    const text = fc.string({ minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(text, text, text, text, (content, thinking, name, args) => {
        const shapes = [
          { content },
          { content: [{ type: "text", text: content }] },
          { content: [{ type: "thinking", thinking: [{ type: "text", text: content }] }] },
          { reasoning_content: content },
          { refusal: content },
          { function_call: { arguments: content } },
          {
            tool_calls: [
              { index: 0, id: "call_1", type: "function", function: { arguments: content } },
            ],
          },
          { audio: { id: "a", data: "QUJD", transcript: content } },
        ];
        for (const delta of shapes)
          expect(counted({ choices: [{ index: 0, delta }] })).toBe(content.length);
        const mixed = {
          reasoning: thinking,
          tool_calls: [{ function: { name, arguments: args } }],
        };
        expect(counted({ choices: [{ delta: mixed }] })).toBe(
          thinking.length + name.length + args.length,
        );
      }),
    );
  });

  it("counts reasoning as reasoning", async () => {
    const delivered = new DeliveredText();
    const chunk = {
      choices: [
        {
          delta: {
            content: [{ type: "thinking", thinking: [{ type: "text", text: "one two three" }] }],
          },
        },
      ],
    };
    addDelivered(JSON.stringify(chunk), delivered);
    expect(await delivered.reasoningTokens()).toBeGreaterThan(0);
    expect((await delivered.output()).total).toBe(await delivered.reasoningTokens());
  });
});
