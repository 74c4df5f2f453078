import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors/index.ts";
import type { ChatResponseFormat } from "../spec/index.ts";
import { checkJsonSchema } from "./json-schema-check.ts";
import { assertStructuredOutput, structuredOutputCheck } from "./structured-output.ts";

const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    name: { type: "string", pattern: "^(a+)+$" },
    size: { type: "integer", minimum: 1 },
    tags: { type: "array", items: { $ref: "#/$defs/tag" } },
  },
  required: ["name", "size", "tags"],
  additionalProperties: false,
  $defs: { tag: { type: "string", enum: ["x", "y"] } },
};
const strict: ChatResponseFormat = { type: "json_schema", name: "thing", schema, strict: true };

function check(format: ChatResponseFormat = strict) {
  const found = structuredOutputCheck(format, "response_format.json_schema.schema");
  if (!found) throw new Error("expected a check");
  return found;
}

describe("structuredOutputCheck", () => {
  it("checks strict json_schema formats only", () => {
    expect(structuredOutputCheck(undefined, "p")).toBeUndefined();
    expect(structuredOutputCheck({ type: "json_object" }, "p")).toBeUndefined();
    expect(structuredOutputCheck({ ...strict, strict: false }, "p")).toBeUndefined();
    expect(structuredOutputCheck({ ...strict, strict: undefined }, "p")).toBeUndefined();
  });

  it("accepts an instance and names the first problem of anything else", () => {
    const { problem } = check();
    expect(problem('{"name":"a","size":2,"tags":["x"]}')).toBeUndefined();
    expect(problem('{"name":"a","size":2}')).toBe("/ must have required property 'tags'");
    expect(problem('{"name":"a","size":0,"tags":[]}')).toBe("/size must be >= 1");
    expect(problem('{"name":"a","size":1,"tags":["z"]}')).toBe(
      "/tags/0 must be one of the allowed values",
    );
    expect(problem('{"name":"a","size":1,"tags":[],"more":1}')).toBe(
      "/ must not have additional property 'more'",
    );
    expect(problem('{"name":"a","size":1.5,"tags":[]}')).toBe("/size must be integer, not number");
    expect(problem('{"name":"a"')).toBe("the answer is not JSON");
  });

  it("does not run the client's patterns over model text (no catastrophic backtracking)", () => {
    // `^(a+)+$` against this string takes longer than the test's timeout if it is run.
    const name = `${"a".repeat(40)}!`;
    expect(check().problem(JSON.stringify({ name, size: 1, tags: [] }))).toBeUndefined();
  });

  it("refuses a schema it cannot check with 400 invalid_json_schema, naming the field", () => {
    const broken = { ...strict, schema: { type: "object", properties: { a: { $ref: "#/nope" } } } };
    const error = (() => {
      try {
        structuredOutputCheck(broken, "text.format.schema");
      } catch (caught) {
        return caught;
      }
    })();
    expect(GatewayError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "invalid_json_schema",
      status: 400,
      param: "text.format.schema",
    });
    expect(() => check({ ...strict, schema: { type: 12 } })).toThrow(/Invalid schema/);
  });

  it("passes truncated answers and tool calls, and throws 502 for a finished answer off the schema", () => {
    const found = check();
    const off = { text: '{"name":"a"}', finishReason: "stop" };
    expect(() => assertStructuredOutput(found, { ...off, finishReason: "length" })).not.toThrow();
    expect(() =>
      assertStructuredOutput(found, {
        ...off,
        toolCalls: [{ id: "c", name: "f", arguments: "{}" }],
      }),
    ).not.toThrow();
    expect(() => assertStructuredOutput(undefined, off)).not.toThrow();
    expect(() => assertStructuredOutput(found, off)).toThrow(
      expect.objectContaining({ code: "structured_output_invalid", status: 502 }),
    );
  });

  it("never throws anything but a verdict for hostile answer text", () => {
    const { problem } = check();
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const verdict = problem(text);
        expect(verdict === undefined || typeof verdict === "string").toBe(true);
      }),
    );
  });

  it("checks a schema of thousands of properties without compiling it", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) properties[`p${i}`] = { type: "string", enum: ["a", "b"] };
    const large: ChatResponseFormat = {
      type: "json_schema",
      name: "large",
      strict: true,
      schema: {
        type: "object",
        properties,
        required: Object.keys(properties),
        additionalProperties: false,
      },
    };
    const answer = Object.fromEntries(Object.keys(properties).map((name) => [name, "a"]));
    const { problem } = check(large);
    expect(problem(JSON.stringify(answer))).toBeUndefined();
    expect(problem(JSON.stringify({ ...answer, p4999: "c" }))).toBe(
      "/p4999 must be one of the allowed values",
    );
  });

  it("gives up within its step budget on a schema that would make checking exponential", () => {
    // Each level offers two identical branches; an answer that fails at the bottom would make a
    // backtracking check try 2^40 paths.
    let node: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 40; level++) {
      const branch = { type: "array", items: node };
      node = { anyOf: [branch, branch] };
    }
    let value: unknown = 7;
    for (let level = 0; level < 40; level++) value = [value];
    expect(checkJsonSchema(node, value)).toEqual({ kind: "unchecked", reason: expect.any(String) });
  });
});
