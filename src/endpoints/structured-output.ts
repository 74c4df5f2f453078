/**
 * @module endpoints/structured-output
 * The gateway's own check of a strict `json_schema` answer, shared by chat completions and
 * Responses. Vendors without OpenAI's constrained decoding (Anthropic's forced tool, Gemini's
 * `responseSchema`, other OpenAI-compatible vendors) do not guarantee the schema, so a whole
 * (non-streamed) answer is checked before it is delivered; one that does not match is a
 * `502 structured_output_invalid`, charged nothing, rather than an object the client's parser
 * throws on. The schema is looked over before the call, so one that cannot be checked (a `$ref`
 * that leads nowhere) is a `400 invalid_json_schema` that costs no upstream call. The checker
 * (`json-schema-check.ts`) interprets the schema with a step budget: no schema, however large,
 * can hold the event loop.
 */
import { GatewayError } from "../errors/index.ts";
import type { ChatResponseFormat } from "../spec/index.ts";
import { checkJsonSchema, schemaProblem } from "./json-schema-check.ts";

export interface StructuredOutputCheck {
  /** Why `text` is not an instance of the schema, or undefined when it is (or is too large to check). */
  problem(text: string): string | undefined;
}

/**
 * The check for a strict `json_schema` format, or undefined for any other format. Throws `400
 * invalid_json_schema` (naming `param`) for a schema that cannot be checked.
 */
export function structuredOutputCheck(
  format: ChatResponseFormat | undefined,
  param: string,
): StructuredOutputCheck | undefined {
  if (format?.type !== "json_schema" || format.strict !== true) return undefined;
  const { schema } = format;
  const invalid = schemaProblem(schema);
  if (invalid) throw new GatewayError("invalid_json_schema", { detail: invalid }, { param });
  return {
    problem(text) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return "the answer is not JSON";
      }
      const outcome = checkJsonSchema(schema, value);
      return outcome.kind === "invalid" ? outcome.problem : undefined;
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
