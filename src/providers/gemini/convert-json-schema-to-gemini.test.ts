import { describe, expect, it } from "vitest";
import { convertJsonSchemaToGemini, isEmptyObjectSchema } from "./convert-json-schema-to-gemini.ts";

describe("convertJsonSchemaToGemini", () => {
  it("strips keywords Gemini rejects and keeps the OpenAPI subset", () => {
    expect(
      convertJsonSchemaToGemini({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        additionalProperties: false,
        properties: {
          city: { type: "string", description: "City", minLength: 1, examples: ["Paris"] },
          when: { type: "string", format: "date-time" },
          email: { type: "string", format: "email" },
          days: { type: "integer", format: "int32", minimum: 1 },
        },
        required: ["city"],
      }),
    ).toEqual({
      type: "object",
      properties: {
        city: { type: "string", description: "City", minLength: 1 },
        when: { type: "string", format: "date-time" },
        email: { type: "string" },
        days: { type: "integer", format: "int32", minimum: 1 },
      },
      required: ["city"],
    });
  });

  it("turns type arrays, null branches, const and oneOf into Gemini forms", () => {
    expect(
      convertJsonSchemaToGemini({
        type: "object",
        properties: {
          a: { type: ["string", "null"] },
          b: { anyOf: [{ type: "number" }, { type: "null" }] },
          c: { const: "fixed" },
          d: { oneOf: [{ type: "string" }, { type: "integer" }] },
          e: { type: ["string", "integer"] },
          f: { type: "integer", enum: [1, 2] },
          g: { type: "array", items: { type: "string", enum: ["x", "y"] } },
        },
      }),
    ).toEqual({
      type: "object",
      properties: {
        a: { type: "string", nullable: true },
        b: { type: "number", nullable: true },
        c: { enum: ["fixed"] },
        d: { anyOf: [{ type: "string" }, { type: "integer" }] },
        e: { anyOf: [{ type: "string" }, { type: "integer" }] },
        f: { type: "integer" },
        g: { type: "array", items: { type: "string", enum: ["x", "y"] } },
      },
    });
  });

  it("inlines local $refs, with a depth limit for recursive ones", () => {
    const converted = convertJsonSchemaToGemini({
      type: "object",
      properties: { home: { $ref: "#/$defs/Address" }, node: { $ref: "#/definitions/Node" } },
      $defs: { Address: { type: "object", properties: { street: { type: "string" } } } },
      definitions: {
        Node: { type: "object", properties: { next: { $ref: "#/definitions/Node" } } },
      },
    });
    expect(converted?.properties).toMatchObject({
      home: { type: "object", properties: { street: { type: "string" } } },
      node: { type: "object", properties: { next: { type: "object" } } },
    });
    expect(JSON.stringify(converted)).not.toContain("$ref");
  });

  it("gives undefined for nothing, {} and empty objects", () => {
    expect(convertJsonSchemaToGemini(undefined)).toBeUndefined();
    expect(convertJsonSchemaToGemini({})).toBeUndefined();
    expect(convertJsonSchemaToGemini({ type: "object", properties: {} })).toBeUndefined();
    expect(isEmptyObjectSchema({ type: "object" })).toBe(true);
    expect(isEmptyObjectSchema({ type: "object", properties: { a: {} } })).toBe(false);
  });
});
