/**
 * @module sandbox/schema-instance
 * What a vendor's structured-output mode returns, emulated: a deterministic instance of a JSON
 * schema (every required property, the right types, enums and consts, string formats, array
 * lengths and number bounds respected, `$ref`s into `$defs`/`definitions` followed, the first
 * branch of `anyOf`/`oneOf`), and OpenAI's strict-mode rules for the schema itself. Gemini's
 * upper-case type names (`OBJECT`, `STRING`) read the same.
 */
import { seededRandom, stableHash, WORDS } from "./deterministic-text.ts";

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const FORMATS: Record<string, string> = {
  "date-time": "2026-01-02T03:04:05Z",
  date: "2026-01-02",
  time: "03:04:05",
  email: "user@example.com",
  uuid: "123e4567-e89b-42d3-a456-426614174000",
  uri: "https://example.com/",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
};

/** The most nesting followed: a recursive schema ends in its smallest instance. */
const MAX_DEPTH = 12;

function resolveRef(schema: Schema, root: Schema): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === "string" && hops < 32; hops++) {
    const path = current.$ref.replace(/^#\/?/, "").split("/").filter(Boolean);
    let target: unknown = root;
    for (const part of path)
      target = isSchema(target) ? target[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    if (!isSchema(target)) return {};
    current = target;
  }
  return current;
}

function typeOf(schema: Schema): string | undefined {
  const type = Array.isArray(schema.type)
    ? (schema.type.find((entry) => String(entry).toLowerCase() !== "null") ?? schema.type[0])
    : schema.type;
  if (typeof type === "string") return type.toLowerCase();
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function stringFor(schema: Schema, next: () => number): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  if (format) return format;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  let text = WORDS[Math.floor(next() * WORDS.length)] ?? "echo";
  while (text.length < min) text += ` ${WORDS[Math.floor(next() * WORDS.length)] ?? "echo"}`;
  return text.slice(0, Math.max(min, Math.min(max, text.length)));
}

function numberFor(schema: Schema, next: () => number, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  const low =
    typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
        ? schema.exclusiveMinimum + step
        : 1;
  const high =
    typeof schema.maximum === "number"
      ? schema.maximum
      : typeof schema.exclusiveMaximum === "number"
        ? schema.exclusiveMaximum - step
        : low + 99;
  if (integer) {
    const from = Math.ceil(low);
    const to = Math.floor(high);
    return to < from ? from : from + Math.floor(next() * (to - from + 1));
  }
  const value = low + next() * Math.max(0, high - low);
  return Math.min(high, Math.max(low, Math.round(value * 100) / 100));
}

interface InstanceContext {
  root: Schema;
  next: () => number;
  /** Fill optional properties too (a structured answer), or only required ones (tool arguments). */
  optional: boolean;
}

function instance(raw: unknown, context: InstanceContext, depth: number): unknown {
  const { root, next } = context;
  if (!isSchema(raw)) return null;
  const schema = resolveRef(raw, root);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[Math.floor(next() * schema.enum.length)];
  }
  const branches = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : undefined;
  if (branches && branches.length > 0) return instance(branches[0], context, depth + 1);
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged = Object.assign(
      {},
      ...schema.allOf.filter(isSchema).map((part) => resolveRef(part, root)),
    );
    return instance(merged, context, depth + 1);
  }
  switch (typeOf(schema)) {
    case "string":
      return stringFor(schema, next);
    case "integer":
      return numberFor(schema, next, true);
    case "number":
      return numberFor(schema, next, false);
    case "boolean":
      return next() < 0.5;
    case "null":
      return null;
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      const max = typeof schema.maxItems === "number" ? schema.maxItems : min + 2;
      const count =
        depth >= MAX_DEPTH ? min : Math.min(max, Math.max(min, 1 + Math.floor(next() * 2)));
      return Array.from({ length: count }, () => instance(schema.items, context, depth + 1));
    }
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
      const result: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(properties)) {
        // Optional properties are filled too, unless the nesting is already deep.
        if (!required.has(name) && (!context.optional || depth >= MAX_DEPTH / 2)) continue;
        result[name] = instance(property, context, depth + 1);
      }
      return result;
    }
    default:
      return WORDS[Math.floor(next() * WORDS.length)] ?? "echo";
  }
}

/**
 * A deterministic instance of `schema` for `seed`. `optional: false` leaves optional properties
 * out, as models calling a tool mostly do (a made-up optional `path` would send the tool
 * elsewhere).
 */
export function schemaInstance(
  schema: unknown,
  seed: number,
  options: { optional?: boolean } = {},
): unknown {
  const root = isSchema(schema) ? schema : {};
  const next = seededRandom(seed ^ stableHash("schema"));
  return instance(root, { root, next, optional: options.optional ?? true }, 0);
}

/**
 * `value` (an instance of `schema`) made to break it, as a model without constrained decoding
 * can: its first required property left out, or, with none, a property the schema does not have.
 */
export function driftFromSchema(value: unknown, schema: unknown): unknown {
  if (!isSchema(value)) return { unexpected: true };
  const required = isSchema(schema) && Array.isArray(schema.required) ? schema.required : [];
  const [first] = required.filter((name): name is string => typeof name === "string");
  if (first === undefined) return { ...value, unexpected: true };
  const { [first]: _left, ...rest } = value;
  return rest;
}

/**
 * Why OpenAI's strict mode refuses `schema`, or undefined: the root must be an object, every
 * object must set `additionalProperties: false` and list every property in `required`.
 */
export function strictSchemaProblem(schema: unknown): string | undefined {
  if (!isSchema(schema) || typeOf(schema) !== "object") {
    return "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'.";
  }
  const visit = (node: unknown, path: string): string | undefined => {
    if (!isSchema(node)) return undefined;
    if (typeOf(node) === "object" && node.$ref === undefined) {
      if (node.additionalProperties !== false) {
        return `In context=(${path}), 'additionalProperties' is required to be supplied and to be false.`;
      }
      const properties = isSchema(node.properties) ? Object.keys(node.properties) : [];
      const required = Array.isArray(node.required) ? node.required.map(String) : [];
      const missing = properties.find((name) => !required.includes(name));
      if (missing !== undefined) {
        return `In context=(${path}), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
      }
    }
    const children: [string, unknown][] = [
      ...Object.entries(isSchema(node.properties) ? node.properties : {}).map(
        ([name, child]): [string, unknown] => [
          `${path ? `${path}, ` : ""}'properties', '${name}'`,
          child,
        ],
      ),
      ["'items'", node.items],
      ...[node.anyOf, node.oneOf, node.allOf].flatMap((list) =>
        Array.isArray(list)
          ? list.map((child, i): [string, unknown] => [`'anyOf', '${i}'`, child])
          : [],
      ),
      ...Object.entries(
        isSchema(node.$defs) ? node.$defs : isSchema(node.definitions) ? node.definitions : {},
      ).map(([name, child]): [string, unknown] => [`'$defs', '${name}'`, child]),
    ];
    for (const [childPath, child] of children) {
      const problem = visit(child, childPath);
      if (problem) return problem;
    }
    return undefined;
  };
  return visit(schema, "");
}
