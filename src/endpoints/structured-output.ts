/**
 * @module endpoints/structured-output
 * The gateway's own check of a strict `json_schema` answer, shared by chat completions and
 * Responses. Vendors without OpenAI's constrained decoding (Anthropic's forced tool, Gemini's
 * `responseSchema`, other OpenAI-compatible vendors) do not guarantee the schema, so a whole
 * (non-streamed) answer is validated before it is delivered; one that does not match is a
 * `502 structured_output_invalid`, charged nothing, rather than an object the client's parser
 * throws on. The schema is compiled before the call, so one that cannot be compiled is a `400
 * invalid_json_schema` that costs no upstream call.
 *
 * What is checked: JSON Schema 2020-12 structure — types, `required`, `additionalProperties`,
 * `enum`/`const`, bounds, `$ref`/`$defs`. Not checked: `pattern` (a client-chosen regular
 * expression run over model-written text could stall the process) and `format`.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { GatewayError } from "../errors/index.ts";
import type { ChatResponseFormat } from "../spec/index.ts";

export interface StructuredOutputCheck {
  /** Why `text` is not an instance of the schema, or undefined when it is. */
  problem(text: string): string | undefined;
}

/** A regular-expression engine that accepts everything: patterns are not checked (see above). */
const uncheckedPatterns = Object.assign(() => ({ test: () => true }), { code: "unchecked" });

const ajv = new Ajv2020({
  strict: false,
  validateFormats: false,
  allErrors: false,
  code: { regExp: uncheckedPatterns },
});

/** Compiled validators by schema text: clients send the same schema request after request. */
const compiled = new Map<string, ValidateFunction>();
const CACHE_LIMIT = 256;

function compile(schema: Record<string, unknown>): ValidateFunction {
  // A dialect or id at the root would make the schema a registered document; neither matters here.
  const { $schema: _dialect, $id: _id, ...body } = schema;
  const key = JSON.stringify(body);
  const known = compiled.get(key);
  if (known) return known;
  const validate = ajv.compile(body);
  if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, validate);
  return validate;
}

/**
 * The check for a strict `json_schema` format, or undefined for any other format. Throws `400
 * invalid_json_schema` (naming `param`) for a schema that cannot be compiled.
 */
export function structuredOutputCheck(
  format: ChatResponseFormat | undefined,
  param: string,
): StructuredOutputCheck | undefined {
  if (format?.type !== "json_schema" || format.strict !== true) return undefined;
  let validate: ValidateFunction;
  try {
    validate = compile(format.schema);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new GatewayError("invalid_json_schema", { detail }, { param });
  }
  return {
    problem(text) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return "the answer is not JSON";
      }
      if (validate(value)) return undefined;
      const [first] = validate.errors ?? [];
      return first ? `${first.instancePath || "/"} ${first.message ?? "is invalid"}` : "invalid";
    },
  };
}

/** Throws `502 structured_output_invalid` when an answer that ended normally breaks the schema. */
export function assertStructuredOutput(
  check: StructuredOutputCheck | undefined,
  answer: { text: string | null | undefined; finishReason: string; toolCalls?: unknown[] },
): void {
  // A truncated answer is reported as such, and a tool call is not the answer.
  if (!check || answer.finishReason !== "stop" || (answer.toolCalls?.length ?? 0) > 0) return;
  const problem = check.problem(answer.text ?? "");
  if (problem) throw new GatewayError("structured_output_invalid", { detail: problem });
}
