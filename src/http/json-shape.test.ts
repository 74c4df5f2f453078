import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonShapeProblem } from "./json-shape.ts";

const wide = { maxDepth: 1000, maxValues: 10_000_000 };

/**
 * Depth and value count of a parsed value as the scan counts them: each container counts its
 * children (at least one), so the count is never below the number of elements and members.
 */
function measure(value: unknown): { depth: number; values: number } {
  if (value === null || typeof value !== "object") return { depth: 0, values: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const inner = children.map(measure);
  return {
    depth: 1 + Math.max(0, ...inner.map((m) => m.depth)),
    values: Math.max(1, children.length) + inner.reduce((sum, m) => sum + m.values, 0),
  };
}

describe("jsonShapeProblem", () => {
  it("counts commas and brackets inside strings as text, not structure", () => {
    const text = JSON.stringify({ a: '[[[,,,{{{"\\', b: ["x,y", "]"] });
    expect(jsonShapeProblem(text, { maxDepth: 2, maxValues: 6 })).toBeUndefined();
    expect(jsonShapeProblem(text, { maxDepth: 1, maxValues: 6 })).toBe("too_deep");
  });

  it("refuses an array with more elements than the limit, and accepts one at it", () => {
    const array = (n: number) => JSON.stringify(Array.from({ length: n }, () => "a"));
    // The array itself counts one, each separator one more.
    expect(jsonShapeProblem(array(999), { maxDepth: 4, maxValues: 1000 })).toBeUndefined();
    expect(jsonShapeProblem(array(1001), { maxDepth: 4, maxValues: 1000 })).toBe("too_many_values");
  });

  it("measures exactly the parsed document's depth and count, whatever its strings hold", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        const { depth, values } = measure(value);
        const count = 1 + values;
        expect(jsonShapeProblem(text, { maxDepth: depth, maxValues: count })).toBeUndefined();
        if (depth > 0) {
          expect(jsonShapeProblem(text, { ...wide, maxDepth: depth - 1 })).toBe("too_deep");
          expect(jsonShapeProblem(text, { ...wide, maxValues: count - 1 })).toBe("too_many_values");
        }
      }),
      { numRuns: 300 },
    );
  });
});
