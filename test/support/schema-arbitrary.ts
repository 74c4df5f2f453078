/**
 * @module test/support/schema-arbitrary
 * fast-check arbitraries for request bodies, built from the JSON Schemas the gateway publishes in
 * `/openapi.json`, and a JSON writer for bodies no `JSON.stringify` can produce: `Raw` leaves are
 * written as they are (`1e400`, `-0`, a 5,000-deep nesting), and object entries keep their order
 * and may repeat or be named `__proto__`.
 */
import fc from "fast-check";

/** JSON text written verbatim. */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object as a list of entries (any key, in order, repeats allowed). */
export class Entries {
  constructor(readonly entries: [string, Tree][]) {}
}

export type Tree = null | boolean | number | string | Raw | Entries | Tree[];

/** The part of JSON Schema the gateway's schemas use. */
export interface JsonSchema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
}

export function writeJson(tree: Tree): string {
  if (tree instanceof Raw) return tree.text;
  if (tree instanceof Entries)
    return `{${tree.entries.map(([key, value]) => `${JSON.stringify(key)}:${writeJson(value)}`).join(",")}}`;
  if (Array.isArray(tree)) return `[${tree.map(writeJson).join(",")}]`;
  return JSON.stringify(tree) ?? "null";
}

/** Plain JSON (as `JSON.parse` returns it) as a tree. */
export function toTree(value: unknown): Tree {
  if (value === null || typeof value !== "object") return value as Tree;
  if (Array.isArray(value)) return value.map(toTree);
  return new Entries(Object.entries(value).map(([key, item]) => [key, toTree(item)]));
}

export interface SchemaOptions {
  /** Arbitraries for properties by name, wherever they occur (e.g. `model`). */
  overrides?: Record<string, fc.Arbitrary<Tree>>;
}

/** Bounds for generated sizes: bodies stay small, so a valid one is cheap to serve. */
const SOME = 3;
const SHORT = 24;

function integerArbitrary(schema: JsonSchema): fc.Arbitrary<Tree> {
  const min = Math.max(schema.minimum ?? -1000, Number.MIN_SAFE_INTEGER);
  const max = Math.min(schema.maximum ?? Math.max(min, 0) + 1000, Number.MAX_SAFE_INTEGER);
  // The bounds themselves are where mistakes live.
  return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
}

function numberArbitrary(schema: JsonSchema): fc.Arbitrary<Tree> {
  const min = schema.minimum ?? -1000;
  const max = schema.maximum ?? min + 2000;
  return fc.oneof(
    fc.double({ min, max, noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(min, max),
  );
}

function objectArbitrary(schema: JsonSchema, options: SchemaOptions): fc.Arbitrary<Tree> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const patterned = Object.values(schema.patternProperties ?? {})[0];
  const extra =
    patterned ??
    (typeof schema.additionalProperties === "object" && properties.length === 0
      ? schema.additionalProperties
      : undefined);
  if (properties.length === 0 && extra) {
    return fc
      .dictionary(fc.string({ minLength: 1, maxLength: 12 }), schemaArbitrary(extra, options), {
        maxKeys: SOME,
      })
      .map((record) => new Entries(Object.entries(record)));
  }
  const fields = properties.map(([name, property]) => {
    const value = options.overrides?.[name] ?? schemaArbitrary(property, options);
    return required.has(name)
      ? value.map((item): [string, Tree] | undefined => [name, item])
      : fc.option(
          value.map((item): [string, Tree] => [name, item]),
          { nil: undefined, freq: 2 },
        );
  });
  return fc
    .tuple(...fields)
    .map(
      (entries) =>
        new Entries(entries.filter((entry): entry is [string, Tree] => entry !== undefined)),
    );
}

/** Values the schema accepts (as far as a JSON Schema can say; model rules come on top). */
export function schemaArbitrary(
  schema: JsonSchema,
  options: SchemaOptions = {},
): fc.Arbitrary<Tree> {
  if (schema.const !== undefined) return fc.constant(toTree(schema.const));
  if (schema.enum) return fc.constantFrom(...schema.enum.map(toTree));
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((variant) => schemaArbitrary(variant, options)));
  switch (schema.type) {
    case "string": {
      const minLength = schema.minLength ?? 0;
      const maxLength = Math.min(schema.maxLength ?? minLength + SHORT, minLength + SHORT);
      return fc.string({ minLength, maxLength, unit: "grapheme" });
    }
    case "integer":
      return integerArbitrary(schema);
    case "number":
      return numberArbitrary(schema);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.min(schema.maxItems ?? minLength + SOME, minLength + SOME);
      return fc.array(schemaArbitrary(schema.items ?? {}, options), { minLength, maxLength });
    }
    case "object":
      return objectArbitrary(schema, options);
    default:
      return fc.jsonValue({ maxDepth: 2 }).map(toTree);
  }
}

/** Every place in a tree a value can be put: the root, object values and array items. */
export function paths(tree: Tree, prefix: (string | number)[] = []): (string | number)[][] {
  const found: (string | number)[][] = [prefix];
  if (tree instanceof Entries)
    tree.entries.forEach(([, value], index) => {
      found.push(...paths(value, [...prefix, index]));
    });
  else if (Array.isArray(tree))
    tree.forEach((value, index) => {
      found.push(...paths(value, [...prefix, index]));
    });
  return found;
}

/** The places in a tree that hold an object (where an entry can be added). */
export function objectPaths(tree: Tree, prefix: (string | number)[] = []): (string | number)[][] {
  const found: (string | number)[][] = tree instanceof Entries ? [prefix] : [];
  const children: Tree[] =
    tree instanceof Entries
      ? tree.entries.map(([, value]) => value)
      : Array.isArray(tree)
        ? tree
        : [];
  children.forEach((child, index) => {
    found.push(...objectPaths(child, [...prefix, index]));
  });
  return found;
}

/** The tree with the value at `path` (indexes of entries or items) replaced. */
export function replaceAt(tree: Tree, path: (string | number)[], value: Tree): Tree {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (tree instanceof Entries)
    return new Entries(
      tree.entries.map(([key, item], index) =>
        index === head ? [key, replaceAt(item, rest, value)] : [key, item],
      ),
    );
  if (Array.isArray(tree))
    return tree.map((item, index) => (index === head ? replaceAt(item, rest, value) : item));
  return tree;
}

/** The tree with an entry added to the object at `path` (or to the root object). */
export function addEntryAt(tree: Tree, path: (string | number)[], entry: [string, Tree]): Tree {
  const [head, ...rest] = path;
  if (tree instanceof Entries) {
    if (head === undefined) return new Entries([entry, ...tree.entries]);
    return new Entries(
      tree.entries.map(([key, item], index) =>
        index === head ? [key, addEntryAt(item, rest, entry)] : [key, item],
      ),
    );
  }
  if (Array.isArray(tree) && head !== undefined)
    return tree.map((item, index) => (index === head ? addEntryAt(item, rest, entry) : item));
  return tree;
}
