/**
 * @module test/support/structured-schema-arbitrary
 * fast-check arbitraries for the JSON Schemas of structured outputs (the subset strict mode
 * allows), shared by the sandbox's instance tests and the gateway's checker tests.
 */
import fc from "fast-check";

/** Random schemas of the subset structured outputs use, up to a few levels deep. */
export const structuredSchemaArbitrary = fc.letrec((tie) => ({
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
