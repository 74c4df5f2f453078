/**
 * @module http/validate
 * Compiles a TypeBox schema once and turns the first violation into a catalogue error that
 * names the offending field (`param`), e.g. `messages[0].role`.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler, type ValueError } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { GatewayError } from "../errors/index.ts";

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

function describe(error: ValueError): string {
  const schema = error.schema as {
    minimum?: number;
    maximum?: number;
    maxItems?: number;
    minItems?: number;
    enum?: unknown[];
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
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a recognized field";
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** The most specific error: prefer the deepest path, so unions report their inner problem. */
function pickError(errors: ValueError[]): ValueError | undefined {
  return errors.reduce<ValueError | undefined>(
    (best, error) =>
      !best || error.path.split("/").length > best.path.split("/").length ? error : best,
    undefined,
  );
}

export function compileValidator<T extends TSchema>(schema: T): Validator<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return value;
    const first = pickError([...compiled.Errors(value)].slice(0, 20));
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
      { detail: `Invalid '${param}': ${describe(first)}.` },
      { param },
    );
  };
}
