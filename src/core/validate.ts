/**
 * @module core/validate
 * Compiles a TypeBox schema once and turns the first violation into a catalogue error that
 * names the offending field (`param`), e.g. `messages[0].role`. Union failures are explained by
 * the variant the client most likely meant (the one whose JSON type matches), and a choice
 * between literals lists the allowed values. Endpoints of OpenAI's protocol read an explicit
 * `null` in an optional field as the field left out (`null-as-absent.ts`).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler, type ValueError } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { GatewayError } from "../errors/index.ts";
import { clearNulls, clearTopLevelNulls } from "./null-as-absent.ts";

export type Validator<T extends TSchema> = (value: unknown) => Static<T>;

/** `/messages/0/role` → `messages[0].role` */
export function toParamPath(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce(
      (path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part),
      "",
    );
}

/** Errors saying the value has the wrong JSON type altogether (not a wrong value). */
const KIND_MISMATCH = new Set<ValueErrorType>([
  ValueErrorType.Array,
  ValueErrorType.Boolean,
  ValueErrorType.Integer,
  ValueErrorType.Null,
  ValueErrorType.Number,
  ValueErrorType.Object,
  ValueErrorType.String,
  ValueErrorType.Undefined,
]);

/** One violation, already explained. */
interface Problem {
  path: string;
  type: ValueErrorType;
  detail: string;
  /** Allowed literal values, when the value had to be one of them. */
  allowed?: unknown[];
  /** True when the value has the wrong JSON type for this schema. */
  kindMismatch: boolean;
}

function depth(path: string): number {
  return path === "" ? 0 : path.split("/").length - 1;
}

function literalValues(schema: TSchema): unknown[] | undefined {
  const { const: value, anyOf } = schema as { const?: unknown; anyOf?: TSchema[] };
  if (value !== undefined) return [value];
  if (!Array.isArray(anyOf) || anyOf.length === 0) return undefined;
  const values = anyOf.map((variant) => (variant as { const?: unknown }).const);
  return values.every((item) => item !== undefined) ? values : undefined;
}

function oneOf(values: unknown[]): string {
  const listed = values.map((value) => (typeof value === "string" ? `'${value}'` : String(value)));
  return listed.length === 1 ? `must be ${listed[0]}` : `must be one of ${listed.join(", ")}`;
}

function describe(error: ValueError): string {
  const schema = error.schema as {
    minimum?: number;
    maximum?: number;
    maxItems?: number;
    minItems?: number;
    minLength?: number;
    maxLength?: number;
  };
  switch (error.type) {
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${schema.maximum}`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${schema.minimum}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${schema.maxItems} items`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${schema.minItems} item${schema.minItems === 1 ? "" : "s"}`;
    case ValueErrorType.StringMinLength:
      return `must be at least ${schema.minLength} characters long`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters long`;
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a recognized field";
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** The most specific problem: the deepest path; on a tie, the first reported. */
function deepest(problems: Problem[]): Problem | undefined {
  return problems.reduce<Problem | undefined>(
    (best, problem) => (!best || depth(problem.path) > depth(best.path) ? problem : best),
    undefined,
  );
}

/** One union variant's violations, for choosing the variant the client meant. */
interface Variant {
  problems: Problem[];
  best: Problem;
  /** The value has the wrong JSON type for this variant. */
  kindMiss: boolean;
  /** A literal (e.g. a `role` or `type` tag) does not match this variant. */
  literalMiss: boolean;
}

/** Orders variants: right JSON type, then matching tags, then the deepest, then the fewest. */
function closer(a: Variant, b: Variant): number {
  return (
    Number(a.kindMiss) - Number(b.kindMiss) ||
    Number(a.literalMiss) - Number(b.literalMiss) ||
    depth(b.best.path) - depth(a.best.path) ||
    a.problems.length - b.problems.length
  );
}

function explainUnion(error: ValueError): Problem {
  const allowed = literalValues(error.schema);
  if (allowed) {
    return {
      path: error.path,
      type: error.type,
      detail: oneOf(allowed),
      allowed,
      kindMismatch: false,
    };
  }
  const variants = error.errors
    .map((iterator): Variant | undefined => {
      const problems = [...iterator].slice(0, 20).map(explain);
      const best = deepest(problems);
      if (!best) return undefined;
      return {
        problems,
        best,
        kindMiss: problems.some((problem) => problem.kindMismatch && problem.path === error.path),
        literalMiss: problems.some((problem) => problem.allowed !== undefined),
      };
    })
    .filter((variant): variant is Variant => variant !== undefined);
  const chosen = [...variants].sort(closer)[0];
  if (!chosen) {
    return { path: error.path, type: error.type, detail: describe(error), kindMismatch: false };
  }
  if (chosen.kindMiss) {
    // No variant has the value's JSON type: name every accepted type.
    const kinds = variants.map((variant) => variant.best.detail.replace(/^expected /, ""));
    return { ...chosen.best, detail: `expected ${[...new Set(kinds)].join(" or ")}` };
  }
  const tag = chosen.literalMiss
    ? chosen.problems.find((problem) => problem.allowed !== undefined)
    : undefined;
  if (tag) {
    // No variant's tag matches (e.g. a message role): list every allowed value of that field.
    const values = variants.flatMap((variant) =>
      variant.problems
        .filter((problem) => problem.path === tag.path)
        .flatMap((problem) => problem.allowed ?? []),
    );
    const unique = [...new Set(values)];
    return { ...tag, allowed: unique, detail: oneOf(unique) };
  }
  return chosen.best;
}

function explain(error: ValueError): Problem {
  if (error.type === ValueErrorType.Union) return explainUnion(error);
  const allowed = error.type === ValueErrorType.Literal ? literalValues(error.schema) : undefined;
  // A schema may word its own rule (`errorMessage`), where the generic wording says less.
  const own = (error.schema as { errorMessage?: unknown }).errorMessage;
  return {
    path: error.path,
    type: error.type,
    detail: typeof own === "string" ? own : allowed ? oneOf(allowed) : describe(error),
    ...(allowed ? { allowed } : {}),
    kindMismatch: KIND_MISMATCH.has(error.type),
  };
}

export interface ValidatorOptions {
  /**
   * OpenAI's protocol: an explicit `null` in an optional field means the field is not set, and
   * is removed from the body before it is checked (`null-as-absent.ts`).
   */
  nullMeansAbsent?: boolean;
}

export function compileValidator<T extends TSchema>(
  schema: T,
  options: ValidatorOptions = {},
): Validator<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (options.nullMeansAbsent) clearTopLevelNulls(value, schema);
    if (compiled.Check(value)) return value;
    if (options.nullMeansAbsent) {
      // A nested null may be what fails: clear them all and check again.
      clearNulls(value, schema);
      if (compiled.Check(value)) return value;
    }
    const first = deepest([...compiled.Errors(value)].slice(0, 20).map(explain));
    if (!first)
      throw new GatewayError("invalid_request", { detail: "The request body is invalid." });
    const param = toParamPath(first.path);
    if (first.type === ValueErrorType.ObjectRequiredProperty) {
      throw new GatewayError("missing_parameter", { param }, { param });
    }
    if (param === "") {
      throw new GatewayError("invalid_request", {
        detail: "The request body must be a JSON object.",
      });
    }
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid '${param}': ${first.detail}.` },
      { param },
    );
  };
}
