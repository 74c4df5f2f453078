/**
 * @module core/null-as-absent
 * OpenAI accepts `null` for every optional field and reads it as "not set", and many client
 * libraries send them (`"temperature": null`, `"tools": null`, `"stop": null`). Endpoints of
 * OpenAI's protocol therefore remove such a null from the parsed body before it is validated:
 * wherever the schema makes the field optional and does not itself take `null`, in nested
 * objects too (messages, content parts, tool definitions). A null in a field the schema does not
 * declare is removed as well (it cannot ask for anything). A required field keeps its null and
 * is refused as before, and a field whose schema takes `null` (an assistant message's
 * `content`) keeps it.
 *
 * The validator clears the top level first (cheap), and walks the whole body only when it then
 * fails its schema, so a body without nested nulls costs no walk.
 */
import type { TSchema } from "@sinclair/typebox";

/** The parts of a JSON schema this walk reads (TypeBox schemas are plain JSON Schema). */
interface SchemaShape {
  type?: string | string[];
  properties?: Record<string, SchemaShape>;
  patternProperties?: Record<string, SchemaShape>;
  required?: string[];
  items?: SchemaShape;
  anyOf?: SchemaShape[];
  const?: unknown;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `null` is a valid value for the schema (a null type, or no type at all: unknown). */
function takesNull(schema: SchemaShape): boolean {
  if (schema.anyOf) return schema.anyOf.some(takesNull);
  if (schema.const !== undefined) return schema.const === null;
  if (schema.type === undefined) return true;
  return Array.isArray(schema.type) ? schema.type.includes("null") : schema.type === "null";
}

/** The alternatives of a schema: its `anyOf` variants (flattened), or itself. */
function alternatives(schema: SchemaShape): SchemaShape[] {
  return schema.anyOf ? schema.anyOf.flatMap(alternatives) : [schema];
}

/** Object alternatives of each schema, worked out once. */
const objectAlternatives = new WeakMap<SchemaShape, SchemaShape[]>();

function objectVariants(schema: SchemaShape): SchemaShape[] {
  let objects = objectAlternatives.get(schema);
  if (!objects) {
    objects = alternatives(schema).filter(
      (variant) => variant.properties !== undefined || variant.patternProperties !== undefined,
    );
    objectAlternatives.set(schema, objects);
  }
  return objects;
}

function propertySchema(schema: SchemaShape, key: string): SchemaShape | undefined {
  const declared = schema.properties?.[key];
  if (declared) return declared;
  const patterns = schema.patternProperties;
  return patterns ? Object.values(patterns)[0] : undefined;
}

/**
 * The object schemas `value` may be meant for: those whose tag fields (a `const`, such as a
 * message's `role` or a part's `type`) match it, or every object schema when none does.
 */
function objectSchemasFor(schema: SchemaShape, value: JsonObject): SchemaShape[] {
  const objects = objectVariants(schema);
  if (objects.length <= 1) return objects;
  const tagged = objects.filter((variant) =>
    Object.entries(variant.properties ?? {}).every(
      ([key, property]) => property.const === undefined || value[key] === property.const,
    ),
  );
  return tagged.length > 0 ? tagged : objects;
}

function anyOf(schemas: SchemaShape[]): SchemaShape | undefined {
  if (schemas.length <= 1) return schemas[0];
  return { anyOf: schemas };
}

function clearObject(value: JsonObject, schema: SchemaShape, deep: boolean): void {
  const variants = objectSchemasFor(schema, value);
  if (variants.length === 0) return;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item !== null && (!deep || typeof item !== "object")) continue;
    const declared = variants.flatMap((variant) => {
      const property = propertySchema(variant, key);
      return property ? [{ variant, property }] : [];
    });
    if (item === null) {
      const keep = declared.some(
        ({ variant, property }) => variant.required?.includes(key) || takesNull(property),
      );
      if (!keep) delete value[key];
      continue;
    }
    const inner = anyOf(declared.map(({ property }) => property));
    if (inner) clearNulls(item, inner);
  }
}

/** Removes the nulls of optional fields of the top-level object only. */
export function clearTopLevelNulls(value: unknown, schema: TSchema | SchemaShape): void {
  if (isObject(value)) clearObject(value, schema as SchemaShape, false);
}

/** Removes the nulls of optional fields from `value` (in place), following `schema`. */
export function clearNulls(value: unknown, schema: TSchema | SchemaShape): void {
  const shape = schema as SchemaShape;
  if (Array.isArray(value)) {
    const items = anyOf(
      alternatives(shape).flatMap((variant) => (variant.items ? [variant.items] : [])),
    );
    if (!items) return;
    for (const item of value)
      if (item !== null && typeof item === "object") clearNulls(item, items);
    return;
  }
  if (isObject(value)) clearObject(value, shape, true);
}
