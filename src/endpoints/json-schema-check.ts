/**
 * @module endpoints/json-schema-check
 * A JSON Schema checker that interprets the schema as it walks the value, with no compilation:
 * a client's schema costs nothing before the answer arrives, and checking costs at most
 * {@link STEP_BUDGET} steps, whatever the schema's size or shape (a code-generating validator
 * spends a second compiling a thousand properties, and nested `anyOf`s can make any
 * backtracking checker exponential). A check that runs out of steps or depth says so instead of
 * a verdict.
 *
 * Keywords: `type` (one or a list; `integer`), `enum`, `const`, `properties`, `required`,
 * `additionalProperties` (`false` or a schema), `items`, `prefixItems`, `minItems`, `maxItems`,
 * `minLength`, `maxLength`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
 * `multipleOf`, `anyOf`, `oneOf`, `allOf`, and `$ref` into the same document (`$defs`,
 * `definitions`, any JSON pointer). Not checked: `pattern` (a client's regular expression over
 * model-written text could stall the process) and `format`.
 */

type Schema = Record<string, unknown>;

/** The most schema-and-value steps one check takes. */
export const STEP_BUDGET = 200_000;
/** The deepest nesting of value and `$ref`s followed. */
const MAX_DEPTH = 128;

export type CheckOutcome =
  | { kind: "valid" }
  | { kind: "invalid"; problem: string }
  | { kind: "unchecked"; reason: string };

class OutOfBudget extends Error {}

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return isSchema(value);
    case "string":
    case "boolean":
      return typeof value === type;
    default:
      return true;
  }
}

/** JSON with object keys sorted: `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isSchema(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return typeof a === "object" && typeof b === "object" && canonical(a) === canonical(b);
}

function pointer(path: string): string {
  return path === "" ? "/" : path;
}

/** Checks `value` against `schema` (a whole document, the root of its `$ref`s). */
export function checkJsonSchema(schema: unknown, value: unknown): CheckOutcome {
  const root = isSchema(schema) ? schema : {};
  let steps = 0;

  const resolve = (ref: string): unknown => {
    if (!ref.startsWith("#")) return undefined;
    let target: unknown = root;
    for (const raw of ref.slice(1).split("/").filter(Boolean)) {
      const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      target = isSchema(target) ? target[part] : undefined;
    }
    return target;
  };

  /** The first problem of `value` at `path`, or undefined. */
  const visit = (node: unknown, item: unknown, path: string, depth: number): string | undefined => {
    steps += 1;
    if (steps > STEP_BUDGET || depth > MAX_DEPTH) throw new OutOfBudget();
    if (node === true || node === undefined) return undefined;
    if (node === false) return `${pointer(path)} is not allowed`;
    if (!isSchema(node)) return undefined;
    if (typeof node.$ref === "string") {
      const target = resolve(node.$ref);
      if (target === undefined) return `${pointer(path)} refers to a missing ${node.$ref}`;
      const problem = visit(target, item, path, depth + 1);
      if (problem) return problem;
    }
    if (node.type !== undefined) {
      const types = Array.isArray(node.type) ? node.type : [node.type];
      if (!types.some((type) => hasType(item, type)))
        return `${pointer(path)} must be ${types.join(" or ")}, not ${typeName(item)}`;
    }
    if (Array.isArray(node.enum) && !node.enum.some((option) => equal(option, item)))
      return `${pointer(path)} must be one of the allowed values`;
    if ("const" in node && !equal(node.const, item))
      return `${pointer(path)} must be the constant value`;
    const problem =
      typeof item === "string"
        ? stringProblem(node, item, path)
        : typeof item === "number"
          ? numberProblem(node, item, path)
          : Array.isArray(item)
            ? arrayProblem(node, item, path, depth)
            : isSchema(item)
              ? objectProblem(node, item, path, depth)
              : undefined;
    if (problem) return problem;
    if (Array.isArray(node.allOf))
      for (const part of node.allOf) {
        const found = visit(part, item, path, depth + 1);
        if (found) return found;
      }
    if (
      Array.isArray(node.anyOf) &&
      !node.anyOf.some((part) => !visit(part, item, path, depth + 1))
    )
      return `${pointer(path)} matches none of anyOf`;
    if (Array.isArray(node.oneOf)) {
      const matches = node.oneOf.filter((part) => !visit(part, item, path, depth + 1)).length;
      if (matches !== 1)
        return `${pointer(path)} must match exactly one of oneOf (matches ${matches})`;
    }
    return undefined;
  };

  const stringProblem = (node: Schema, item: string, path: string) => {
    const length = [...item].length;
    if (typeof node.minLength === "number" && length < node.minLength)
      return `${pointer(path)} must be at least ${node.minLength} characters`;
    if (typeof node.maxLength === "number" && length > node.maxLength)
      return `${pointer(path)} must be at most ${node.maxLength} characters`;
    return undefined;
  };

  const numberProblem = (node: Schema, item: number, path: string) => {
    const at = pointer(path);
    if (typeof node.minimum === "number" && item < node.minimum)
      return `${at} must be >= ${node.minimum}`;
    if (typeof node.maximum === "number" && item > node.maximum)
      return `${at} must be <= ${node.maximum}`;
    if (typeof node.exclusiveMinimum === "number" && item <= node.exclusiveMinimum)
      return `${at} must be > ${node.exclusiveMinimum}`;
    if (typeof node.exclusiveMaximum === "number" && item >= node.exclusiveMaximum)
      return `${at} must be < ${node.exclusiveMaximum}`;
    if (typeof node.multipleOf === "number" && node.multipleOf > 0) {
      const ratio = item / node.multipleOf;
      if (Math.abs(ratio - Math.round(ratio)) > 1e-9)
        return `${at} must be a multiple of ${node.multipleOf}`;
    }
    return undefined;
  };

  const arrayProblem = (node: Schema, item: unknown[], path: string, depth: number) => {
    if (typeof node.minItems === "number" && item.length < node.minItems)
      return `${pointer(path)} must have at least ${node.minItems} items`;
    if (typeof node.maxItems === "number" && item.length > node.maxItems)
      return `${pointer(path)} must have at most ${node.maxItems} items`;
    const prefix = Array.isArray(node.prefixItems) ? node.prefixItems : [];
    for (let index = 0; index < item.length; index++) {
      const each = index < prefix.length ? prefix[index] : node.items;
      const found = visit(each, item[index], `${path}/${index}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  };

  const objectProblem = (node: Schema, item: Schema, path: string, depth: number) => {
    const properties = isSchema(node.properties) ? node.properties : {};
    if (Array.isArray(node.required))
      for (const name of node.required)
        if (typeof name === "string" && !Object.hasOwn(item, name))
          return `${pointer(path)} must have required property '${name}'`;
    for (const [name, each] of Object.entries(item)) {
      const at = `${path}/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      if (Object.hasOwn(properties, name)) {
        const found = visit(properties[name], each, at, depth + 1);
        if (found) return found;
      } else if (node.additionalProperties === false) {
        return `${pointer(path)} must not have additional property '${name}'`;
      } else if (isSchema(node.additionalProperties)) {
        const found = visit(node.additionalProperties, each, at, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };

  try {
    const problem = visit(root, value, "", 0);
    return problem ? { kind: "invalid", problem } : { kind: "valid" };
  } catch (error) {
    if (error instanceof OutOfBudget || error instanceof RangeError)
      return {
        kind: "unchecked",
        reason: "the schema and answer are larger than the gateway checks",
      };
    throw error;
  }
}

const TYPE_NAMES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/**
 * Why `schema` is not a schema the gateway can check — a `$ref` that leads nowhere, a `type`
 * that names no type — or undefined. One pass over the schema (already bounded by the request
 * body's limits), before any upstream call.
 */
export function schemaProblem(schema: unknown): string | undefined {
  if (!isSchema(schema)) return "the schema must be an object";
  const pending: Array<{ node: unknown; path: string }> = [{ node: schema, path: "" }];
  while (pending.length > 0) {
    const { node, path } = pending.pop()!;
    if (Array.isArray(node)) {
      node.forEach((each, index) => {
        pending.push({ node: each, path: `${path}/${index}` });
      });
      continue;
    }
    if (!isSchema(node)) continue;
    if (typeof node.$ref === "string") {
      let target: unknown = node.$ref.startsWith("#") ? schema : undefined;
      for (const raw of node.$ref.slice(1).split("/").filter(Boolean)) {
        const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
        target = isSchema(target) ? target[part] : undefined;
      }
      if (target === undefined) return `${pointer(path)}: $ref '${node.$ref}' does not resolve`;
    }
    if (node.type !== undefined) {
      const types = Array.isArray(node.type) ? node.type : [node.type];
      const unknown = types.find((type) => typeof type !== "string" || !TYPE_NAMES.has(type));
      if (types.length === 0 || unknown !== undefined)
        return `${pointer(path)}: type ${JSON.stringify(node.type)} is not a JSON Schema type`;
    }
    for (const [key, child] of Object.entries(node))
      if (typeof child === "object" && child !== null)
        pending.push({ node: child, path: `${path}/${key}` });
  }
  return undefined;
}
