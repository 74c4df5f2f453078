/**
 * @module providers/gemini/convert-json-schema-to-gemini
 * Converts a JSON Schema (tool parameters, `json_schema` response formats) to Gemini's `Schema`,
 * an OpenAPI 3.0 subset that rejects unknown keywords with a 400. Conversions:
 * - `type: ["string", "null"]` → `type: "string", nullable: true` (several non-null types → `anyOf`);
 * - `const: x` → `enum: [x]`; `oneOf` → `anyOf`; a `{type: "null"}` branch → `nullable: true`;
 * - local `$ref`s (`#/$defs/...`, `#/definitions/...`) are inlined, at most 8 levels deep;
 * - `enum` is kept only when every value is a string (Gemini enums are strings);
 * - `format` is kept only where Gemini supports it (`date-time`/`enum` on strings, `int32`,
 *   `int64`, `float`, `double` on numbers);
 * - every other keyword Gemini does not know (`$schema`, `additionalProperties`, `allOf`,
 *   `examples`, `patternProperties`, ...) is dropped.
 * @see https://ai.google.dev/api/caching#Schema
 */

type JsonSchema = Record<string, unknown>;

const isRecord = (value: unknown): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Keywords copied as they are. */
const PLAIN_KEYS = [
  "title",
  "description",
  "nullable",
  "required",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "default",
  "example",
  "propertyOrdering",
];
const STRING_FORMATS = new Set(["date-time", "enum"]);
const NUMBER_FORMATS = new Set(["int32", "int64", "float", "double"]);
const MAX_REF_DEPTH = 8;

/** True for `{type: "object"}` with no properties: Gemini rejects it as function parameters. */
export function isEmptyObjectSchema(schema: unknown): boolean {
  return (
    isRecord(schema) &&
    schema.type === "object" &&
    (!isRecord(schema.properties) || Object.keys(schema.properties).length === 0)
  );
}

function resolveRef(ref: string, root: JsonSchema): unknown {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!match) return undefined;
  const defs = root[match[1] as string];
  return isRecord(defs) ? defs[decodeURIComponent(match[2] as string)] : undefined;
}

function isNullSchema(schema: unknown): boolean {
  return isRecord(schema) && schema.type === "null";
}

function convert(schema: unknown, root: JsonSchema, depth: number): JsonSchema {
  if (!isRecord(schema)) return {};
  if (typeof schema.$ref === "string") {
    const target = depth < MAX_REF_DEPTH ? resolveRef(schema.$ref, root) : undefined;
    const { $ref: _ref, ...rest } = schema;
    return { ...convert(target ?? {}, root, depth + 1), ...convert(rest, root, depth) };
  }
  const result: JsonSchema = {};
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(
    (type): type is string => typeof type === "string",
  );
  const nonNull = types.filter((type) => type !== "null");
  if (types.includes("null")) result.nullable = true;
  if (nonNull.length === 1) result.type = nonNull[0];
  else if (nonNull.length > 1) result.anyOf = nonNull.map((type) => ({ type }));

  for (const key of PLAIN_KEYS) if (schema[key] !== undefined) result[key] = schema[key];
  const values = schema.const !== undefined ? [schema.const] : schema.enum;
  if (Array.isArray(values) && values.every((value) => typeof value === "string"))
    result.enum = values;
  if (typeof schema.format === "string") {
    const formats = result.type === "string" ? STRING_FORMATS : NUMBER_FORMATS;
    if (formats.has(schema.format)) result.format = schema.format;
  }
  if (isRecord(schema.properties)) {
    result.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, value]) => [name, convert(value, root, depth)]),
    );
  }
  const items = Array.isArray(schema.items) ? schema.items[0] : schema.items;
  if (items !== undefined) result.items = convert(items, root, depth);

  const options = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(options)) {
    if (options.some(isNullSchema)) result.nullable = true;
    const branches = options.filter((option) => !isNullSchema(option));
    if (branches.length === 1) Object.assign(result, convert(branches[0], root, depth));
    else if (branches.length > 1)
      result.anyOf = branches.map((option) => convert(option, root, depth));
  }
  return result;
}

/** The Gemini form of a JSON Schema; `undefined` when nothing is left (missing, `{}`, empty object). */
export function convertJsonSchemaToGemini(schema: unknown): JsonSchema | undefined {
  if (!isRecord(schema) || isEmptyObjectSchema(schema)) return undefined;
  const converted = convert(schema, schema, 0);
  return Object.keys(converted).length > 0 ? converted : undefined;
}
