/**
 * @module test/support/hostile-values
 * Hostile request bodies for property tests: values that break naive code (deep nesting, huge
 * strings, invalid UTF-8, wrong types, `__proto__` and `constructor` keys, numbers at the edges
 * of what JSON and JavaScript can hold, empty and very long arrays), and bodies built from an
 * endpoint's schema with such a value put somewhere, or an extra hostile entry added.
 */
import fc from "fast-check";
import {
  addEntryAt,
  Entries,
  type JsonSchema,
  objectPaths,
  paths,
  Raw,
  replaceAt,
  type SchemaOptions,
  schemaArbitrary,
  type Tree,
  writeJson,
} from "./schema-arbitrary.ts";

/** Stands for bytes that are not UTF-8; `toBytes` puts them in. */
const NOT_UTF8 = "\uE000not-utf8\uE000";
const NOT_UTF8_BYTES = Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xc0, 0xaf, 0x80]);

/** The body's bytes: UTF-8, except where `NOT_UTF8` stands, which becomes invalid bytes. */
export function toBytes(text: string): Buffer {
  const parts = text.split(NOT_UTF8).map((part) => Buffer.from(part, "utf8"));
  return Buffer.concat(
    parts.flatMap((part, index) => (index === 0 ? [part] : [NOT_UTF8_BYTES, part])),
  );
}

function nested(depth: number, kind: "array" | "object"): Raw {
  return kind === "array"
    ? new Raw(`${"[".repeat(depth)}${"]".repeat(depth)}`)
    : new Raw(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
}

const KINDS = fc.constantFrom<"array" | "object">("array", "object");

/** Numbers at the edges, written as JSON text (some are not representable in a double). */
const EDGE_NUMBERS = [
  "1e308",
  "-1e308",
  "1.7976931348623157e308",
  "1e400",
  "-1e400",
  "-0",
  "0.0",
  "5e-324",
  "1e-400",
  "9007199254740993",
  "-9007199254740993",
  "18446744073709551616",
  "123456789012345678901234567890123456789",
  "4294967296",
  "2147483648",
  "-2147483649",
  "0.5",
  "-1",
  "0",
  "1",
].map((text) => new Raw(text));

const ODD_STRINGS: Tree[] = [
  "",
  " ",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e309",
  "0x10",
  " 42 ",
  "null",
  "true",
  "\u0000",
  "\ud800",
  "\udfff\ud800",
  "\u202e\u2066",
  "\r\n\r\nHTTP/1.1 200 OK",
  "../../../../etc/passwd",
  "%s%n%x",
  ["$", "{jndi:ldap://x}"].join(""),
  "<script>alert(1)</script>",
  "'; DROP TABLE accounts; --",
  "🏳️‍🌈".repeat(50),
  NOT_UTF8,
  `a${NOT_UTF8}b`,
];

const PROTO_OBJECTS = [
  '{"__proto__":{"polluted":true,"role":"admin","balance_micros":1}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"__proto__":null}',
  '{"__proto__":[]}',
  '{"toString":1,"valueOf":"x","hasOwnProperty":[],"then":"x"}',
  '{"a":1,"a":2,"a":{"__proto__":{"x":1}}}',
].map((text) => new Raw(text));

const WRONG_TYPES: Tree[] = [
  null,
  true,
  false,
  0,
  "",
  [],
  new Entries([]),
  [null],
  [[]],
  [new Entries([])],
];

/** One hostile value. Sizes stay well under the body limit; `hostile-load` goes to the limit. */
export const hostileValue: fc.Arbitrary<Tree> = fc.oneof(
  fc.tuple(fc.integer({ min: 65, max: 5000 }), KINDS).map(([depth, kind]) => nested(depth, kind)),
  fc.tuple(fc.integer({ min: 2, max: 64 }), KINDS).map(([depth, kind]) => nested(depth, kind)),
  fc
    .tuple(fc.integer({ min: 1000, max: 200_000 }), fc.constantFrom("x", "é", "😀", "[", '"', "\\"))
    .map(([length, unit]) => unit.repeat(length)),
  fc.constantFrom(...EDGE_NUMBERS),
  fc.constantFrom(...ODD_STRINGS),
  fc.constantFrom(...WRONG_TYPES),
  fc.constantFrom(...PROTO_OBJECTS),
  fc
    .tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom("0", '""', "{}", "[]", "null"))
    .map(([length, item]) => new Raw(`[${Array.from({ length }, () => item).join(",")}]`)),
  fc.double().map((value) => value),
  fc.jsonValue({ maxDepth: 3 }).map((value) => new Raw(JSON.stringify(value) ?? "null")),
);

/** Keys that trip object handling, or that no schema knows. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "",
    "💥",
    NOT_UTF8,
    "x".repeat(10_000),
  ),
  fc.string({ minLength: 1, maxLength: 16 }),
);

export interface HostileBody {
  /** How the body was made, for failure messages. */
  kind: string;
  text: string;
  contentType: string;
}

function contentTypes(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant("application/json") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/json; charset=latin1",
        "text/plain",
        "application/x-www-form-urlencoded",
      ),
    },
  );
}

/** Bodies for one endpoint: valid by its schema, mutated at one place, extended, or garbage. */
export function hostileBodies(
  schema: JsonSchema,
  options: SchemaOptions = {},
): fc.Arbitrary<HostileBody> {
  const valid = schemaArbitrary(schema, options);
  const replaced = valid.chain((tree) => {
    const places = paths(tree);
    return fc
      .tuple(fc.integer({ min: 0, max: places.length - 1 }), hostileValue)
      .map(([index, value]) => replaceAt(tree, places[index] ?? [], value));
  });
  const extended = valid.chain((tree) => {
    const objects = objectPaths(tree);
    if (objects.length === 0) return fc.constant(tree);
    return fc
      .tuple(fc.integer({ min: 0, max: objects.length - 1 }), hostileKey, hostileValue)
      .map(([index, key, value]) => addEntryAt(tree, objects[index] ?? [], [key, value]));
  });
  const garbage = fc.oneof(
    hostileValue,
    fc.constantFrom(
      new Raw(""),
      new Raw("   "),
      new Raw("{"),
      new Raw('{"model":'),
      new Raw("\uFEFF{}"),
      new Raw("{}{}"),
      new Raw("[1,]"),
      new Raw("{'model':'x'}"),
      new Raw(`{"model":"${NOT_UTF8}"}`),
    ),
    fc.string({ maxLength: 64 }).map((text) => new Raw(text)),
  );
  const tree = fc.oneof(
    { weight: 2, arbitrary: valid.map((body) => ["valid", body] as const) },
    { weight: 4, arbitrary: replaced.map((body) => ["replaced", body] as const) },
    { weight: 3, arbitrary: extended.map((body) => ["extended", body] as const) },
    { weight: 2, arbitrary: garbage.map((body) => ["garbage", body] as const) },
  );
  return fc.tuple(tree, contentTypes()).map(([[kind, body], contentType]) => ({
    kind,
    text: writeJson(body),
    contentType,
  }));
}

export { NOT_UTF8 };
