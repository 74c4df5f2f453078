/**
 * What a delivered answer is charged: the vendor's report, unless it reports no output for an
 * answer that has some; never less than the report.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TokenUsage } from "../spec/index.ts";
import { atLeastDelivered, completedUsage } from "./delivered-usage.ts";

const usage = (input: number, output: number, source: TokenUsage["source"]): TokenUsage => ({
  input: { total: input, cacheRead: 0, cacheWrite: 0 },
  output: { total: output, reasoning: 0 },
  source,
});

describe("completedUsage", () => {
  it("takes a report of some output as it is, without counting", async () => {
    let counted = false;
    const reported = usage(10, 1, "upstream");
    const charged = await completedUsage(reported, async () => {
      counted = true;
      return usage(10, 500, "estimated");
    });
    expect({ charged, counted }).toEqual({ charged: reported, counted: false });
  });

  it("counts an answer whose report has no output, or that has no report", async () => {
    expect(
      (await completedUsage(usage(10, 0, "upstream"), async () => usage(8, 40, "estimated"))).output
        .total,
    ).toBe(40);
    expect(await completedUsage(undefined, async () => usage(8, 40, "estimated"))).toEqual(
      usage(8, 40, "estimated"),
    );
  });

  it("adds its count of the answer to a report of reasoning only (Gemini without candidatesTokenCount)", async () => {
    const reported: TokenUsage = {
      input: { total: 10, cacheRead: 0, cacheWrite: 0 },
      output: { total: 7, reasoning: 7 },
      source: "upstream",
    };
    const charged = await completedUsage(reported, async () => usage(8, 500, "estimated"));
    expect(charged.output).toEqual({ total: 507, reasoning: 7 });
    expect(charged.input.total).toBe(10);
    // A reasoning-only answer with nothing visible delivered: the report stands.
    expect(await completedUsage(reported, async () => usage(8, 0, "estimated"))).toBe(reported);
  });

  it("keeps the vendor's exact counts for an empty answer reported as empty", async () => {
    const reported = usage(10, 0, "upstream");
    expect(await completedUsage(reported, async () => usage(30, 0, "estimated"))).toBe(reported);
  });

  it("never charges less than either side where it counts", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(10_000),
        fc.nat(10_000),
        fc.nat(10_000),
        fc.nat(10_000),
        async (ri, ro, oi, oo) => {
          const charged = await completedUsage(usage(ri, ro, "upstream"), async () =>
            usage(oi, oo, "estimated"),
          );
          expect(charged.output.total).toBeGreaterThanOrEqual(ro);
          expect(charged.input.total).toBeGreaterThanOrEqual(ri);
          if (ro === 0) expect(charged.output.total).toBe(oo);
          expect(charged).toEqual(
            ro > 0 || oo === 0
              ? usage(ri, ro, "upstream")
              : atLeastDelivered(usage(ri, ro, "upstream"), usage(oi, oo, "estimated")),
          );
        },
      ),
    );
  });
});
