import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { structuredSchemaArbitrary } from "../../test/support/structured-schema-arbitrary.ts";
import { driftFromSchema, schemaInstance } from "../sandbox/schema-instance.ts";
import { checkJsonSchema, schemaProblem } from "./json-schema-check.ts";

const ajv = new Ajv2020({ strict: false, validateFormats: false });

describe("checkJsonSchema", () => {
  it("agrees with a reference validator on random schemas and answers", () => {
    fc.assert(
      fc.property(
        structuredSchemaArbitrary.node,
        fc.integer(),
        fc.oneof(fc.constant("instance"), fc.constant("drifted"), fc.jsonValue()),
        (schema, seed, kind) => {
          const instance = schemaInstance(schema, seed);
          const value =
            kind === "instance"
              ? instance
              : kind === "drifted"
                ? driftFromSchema(instance, schema)
                : kind;
          const reference = ajv.compile(schema as object)(value);
          const outcome = checkJsonSchema(schema, value);
          expect(outcome.kind, JSON.stringify({ schema, value, outcome })).toBe(
            reference ? "valid" : "invalid",
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("compares enum and const objects by value, whatever their key order", () => {
    const schema = { const: { a: 1, b: [2, { c: 3, d: 4 }] } };
    expect(checkJsonSchema(schema, { b: [2, { d: 4, c: 3 }], a: 1 })).toEqual({ kind: "valid" });
    expect(checkJsonSchema(schema, { a: 1, b: [2, { c: 3 }] }).kind).toBe("invalid");
    expect(checkJsonSchema({ enum: [1, "1"] }, "1")).toEqual({ kind: "valid" });
    expect(checkJsonSchema({ enum: [1] }, "1").kind).toBe("invalid");
  });

  it("follows $ref into $defs, recursively", () => {
    const schema = {
      type: "object",
      properties: { tree: { $ref: "#/$defs/node" } },
      required: ["tree"],
      $defs: {
        node: {
          type: "object",
          properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["kids"],
        },
      },
    };
    expect(checkJsonSchema(schema, { tree: { kids: [{ kids: [] }] } })).toEqual({ kind: "valid" });
    expect(checkJsonSchema(schema, { tree: { kids: [{}] } })).toEqual({
      kind: "invalid",
      problem: "/tree/kids/0 must have required property 'kids'",
    });
  });
});

describe("schemaProblem", () => {
  it("finds refs that lead nowhere and types that are not types, and passes sound schemas", () => {
    expect(schemaProblem({ type: "object", properties: { a: { $ref: "#/$defs/x" } } })).toBe(
      "/properties/a: $ref '#/$defs/x' does not resolve",
    );
    expect(schemaProblem({ type: "text" })).toBe('/: type "text" is not a JSON Schema type');
    expect(schemaProblem([])).toBe("the schema must be an object");
    fc.assert(
      fc.property(structuredSchemaArbitrary.node, (schema) => {
        expect(schemaProblem(schema)).toBeUndefined();
      }),
    );
  });
});
