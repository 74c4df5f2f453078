import { Ajv } from "ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { schemaInstance, strictSchemaProblem } from "./schema-instance.ts";

const ajv = new Ajv({ strict: false, validateFormats: false });

/** Random schemas of the subset structured outputs use, up to a few levels deep. */
const schemaArbitrary = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.record({
      type: fc.constant("string"),
      minLength: fc.integer({ min: 0, max: 20 }),
    }),
    fc.record(
      { type: fc.constant("integer"), minimum: fc.integer({ min: -50, max: 50 }) },
      { requiredKeys: ["type"] },
    ),
    fc.record({ type: fc.constant("number"), minimum: fc.constant(0), maximum: fc.constant(1) }),
    fc.constant({ type: "boolean" }),
    fc.record({
      enum: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), {
        minLength: 1,
        maxLength: 4,
      }),
    }),
    fc.record({ const: fc.string({ maxLength: 5 }) }),
    fc.constant({ type: ["string", "null"] }),
  ),
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tie("leaf"),
    fc.record({
      type: fc.constant("array"),
      items: tie("node"),
      minItems: fc.integer({ min: 0, max: 3 }),
    }),
    fc
      .dictionary(fc.stringMatching(/^[a-z]{1,8}$/), tie("node"), { maxKeys: 4 })
      .map((properties) => ({
        type: "object",
        properties,
        required: Object.keys(properties),
        additionalProperties: false,
      })),
    fc.record({ anyOf: fc.array(tie("node"), { minLength: 1, maxLength: 2 }) }),
  ),
}));

describe("schemaInstance", () => {
  it("makes a value every random schema accepts, the same for the same seed", () => {
    fc.assert(
      fc.property(schemaArbitrary.node, fc.integer(), (schema, seed) => {
        const value = schemaInstance(schema, seed);
        const validate = ajv.compile(schema as object);
        expect(validate(value), JSON.stringify({ schema, value, errors: validate.errors })).toBe(
          true,
        );
        expect(schemaInstance(schema, seed)).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it("follows $ref into $defs and respects formats", () => {
    const schema = {
      type: "object",
      properties: {
        when: { type: "string", format: "date-time" },
        who: { $ref: "#/$defs/person" },
      },
      required: ["when", "who"],
      additionalProperties: false,
      $defs: {
        person: {
          type: "object",
          properties: {
            email: { type: "string", format: "email" },
            age: { type: "integer", minimum: 18, maximum: 18 },
          },
          required: ["email", "age"],
          additionalProperties: false,
        },
      },
    };
    const value = schemaInstance(schema, 7) as {
      when: string;
      who: { email: string; age: number };
    };
    expect(Number.isNaN(Date.parse(value.when))).toBe(false);
    expect(value.who.email).toMatch(/^[^@]+@[^@]+$/);
    expect(value.who.age).toBe(18);
  });
});

describe("strictSchemaProblem", () => {
  it("refuses what OpenAI's strict mode refuses", () => {
    expect(strictSchemaProblem({ type: "object", properties: {} })).toMatch(/additionalProperties/);
    expect(
      strictSchemaProblem({
        type: "object",
        properties: { a: { type: "string" } },
        required: [],
        additionalProperties: false,
      }),
    ).toMatch(/Missing 'a'/);
    expect(strictSchemaProblem({ type: "string" })).toMatch(/type: "object"/);
    expect(
      strictSchemaProblem({
        type: "object",
        properties: { inner: { type: "object", properties: {} } },
        required: ["inner"],
        additionalProperties: false,
      }),
    ).toMatch(/'properties', 'inner'/);
  });

  it("accepts a strict schema", () => {
    expect(
      strictSchemaProblem({
        type: "object",
        properties: { a: { type: "array", items: { type: "string" } } },
        required: ["a"],
        additionalProperties: false,
      }),
    ).toBeUndefined();
  });
});
