import { Ajv } from "ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { structuredSchemaArbitrary as schemaArbitrary } from "../../test/support/structured-schema-arbitrary.ts";
import { schemaInstance, strictSchemaProblem } from "./schema-instance.ts";

const ajv = new Ajv({ strict: false, validateFormats: false });

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
