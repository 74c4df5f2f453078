import fc from "fast-check";
import { getEncoding } from "js-tiktoken";
import { beforeAll, describe, expect, it } from "vitest";
import { countTokens, warmTokenizer } from "./tokenizer.ts";

const reference = getEncoding("o200k_base");
const plain = (text: string) => reference.encode(text, "all").length;

describe("countTokens", () => {
  beforeAll(() => warmTokenizer(), 30_000);

  it("counts text without long runs exactly as the encoder does", async () => {
    const word = fc.stringMatching(/^[A-Za-z]{1,12}$/);
    const text = fc
      .array(fc.tuple(word, fc.constantFrom(" ", ", ", ". ", "\n", " 42 ", "! ")), {
        maxLength: 400,
      })
      .map((parts) => parts.map(([w, gap]) => w + gap).join(""));
    await fc.assert(
      fc.asyncProperty(text, async (value) => {
        expect(await countTokens(value, { exact: true })).toBe(plain(value));
      }),
      { numRuns: 50 },
    );
  });

  it("counts long texts slice by slice to within a token per slice", async () => {
    const text = "The gateway counts tokens of long prompts in slices. ".repeat(2_000);
    const exact = plain(text);
    const counted = await countTokens(text, { exact: true });
    expect(Math.abs(counted - exact)).toBeLessThanOrEqual(Math.ceil(text.length / 2048));
  });

  it("counts runs of one character in short pieces, close to the encoder's count", async () => {
    for (const run of ["a".repeat(1_000), "!".repeat(1_000), " ".repeat(1_000), "测".repeat(300)]) {
      const exact = plain(run);
      const counted = await countTokens(run, { exact: true });
      // Cut into 16-character pieces: at most one token more per piece, never fewer than the
      // pieces' own tokens.
      expect(counted).toBeGreaterThanOrEqual(Math.floor(exact * 0.9));
      expect(counted).toBeLessThanOrEqual(exact + Math.ceil(run.length / 16));
    }
  });
});
