/**
 * @module providers/anthropic/anthropic-json-output
 * JSON output on Anthropic, which has no JSON mode of its own:
 * - `json_schema` becomes an output tool whose `input_schema` is the schema, forced with
 *   `tool_choice: {type:"tool"}` when nothing else needs the choice; the tool's input is the
 *   answer, given back as text. A schema whose root is not an object (tool inputs must be) is
 *   wrapped as `{value: …}` and unwrapped again. With the client's own tools, or with thinking
 *   (Anthropic refuses a forced tool there), the tool is offered next to them and a system
 *   instruction asks for it, with a compatibility warning.
 * - `json_object` is asked for by a system instruction, and the assistant turn is prefilled
 *   with `{` where a prefill is possible (not with tools or thinking).
 * @see https://docs.anthropic.com/en/docs/build-with-claude/tool-use#forcing-tool-use
 */
import type { CallWarning, ChatFinishReason, ChatResponseFormat } from "../../spec/index.ts";
import type { AnthropicRequestBody } from "./anthropic-api.ts";

export const JSON_PREFILL = "{";

/** The tool that carries a `json_schema` answer. */
export interface OutputTool {
  name: string;
  /** The schema's root was not an object: the answer is the tool input's `value`. */
  wrapped: boolean;
}

export interface JsonOutputPlan {
  /** Text the assistant turn was prefilled with; it belongs in front of the answer. */
  prefill?: string;
  outputTool?: OutputTool;
}

const JSON_OBJECT_INSTRUCTION = "Respond with a single valid JSON object and nothing else.";
const TOOL_DESCRIPTION =
  "Give your final answer by calling this tool: its input is the answer, as the schema describes.";
const NAME_LIMIT = 64;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema.type === "object" && schema.anyOf === undefined && schema.oneOf === undefined;
}

/** The tool's input schema: the schema itself, or `{value: schema}` with its definitions kept at the root. */
function inputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (isObjectSchema(schema)) return schema;
  const { $defs, definitions, $schema: _dialect, ...value } = schema;
  return {
    type: "object",
    properties: { value },
    required: ["value"],
    additionalProperties: false,
    ...(isRecord($defs) ? { $defs } : {}),
    ...(isRecord(definitions) ? { definitions } : {}),
  };
}

function uniqueName(wanted: string, taken: ReadonlySet<string>): string {
  const base = (wanted.replace(/[^a-zA-Z0-9_-]/g, "_") || "json_output").slice(0, NAME_LIMIT);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base.slice(0, NAME_LIMIT - 1 - String(n).length)}_${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

function addSystem(body: AnthropicRequestBody, instruction: string): void {
  body.system = body.system ? `${body.system}\n\n${instruction}` : instruction;
}

/** Shapes `body` (tools, tool choice, system, prefill) for the requested JSON output. */
export function applyJsonOutput(
  body: AnthropicRequestBody,
  format: ChatResponseFormat | undefined,
  context: { thinkingOn: boolean; warnings: CallWarning[] },
): JsonOutputPlan {
  if (format?.type === "json_object") {
    addSystem(body, JSON_OBJECT_INSTRUCTION);
    if (!body.tools && !context.thinkingOn && body.messages.at(-1)?.role === "user") {
      body.messages = [...body.messages, { role: "assistant", content: JSON_PREFILL }];
      return { prefill: JSON_PREFILL };
    }
    context.warnings.push({
      type: "compatibility",
      setting: "response_format",
      details: "JSON output is requested by instruction only (no prefill with tools or thinking)",
    });
    return {};
  }
  if (format?.type !== "json_schema") return {};

  const clientTools = body.tools ?? [];
  const name = uniqueName(format.name, new Set(clientTools.map((tool) => tool.name)));
  const outputTool: OutputTool = { name, wrapped: !isObjectSchema(format.schema) };
  body.tools = [
    ...clientTools,
    { name, description: TOOL_DESCRIPTION, input_schema: inputSchema(format.schema) },
  ];
  // `tool_choice: none` forbids the client's tools, not the answer's tool.
  const noClientTool = clientTools.length === 0 || body.tool_choice?.type === "none";
  if (noClientTool && !context.thinkingOn) {
    const choice = body.tool_choice;
    const disable =
      choice && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use;
    body.tool_choice = {
      type: "tool",
      name,
      ...(disable ? { disable_parallel_tool_use: true } : {}),
    };
  } else {
    // Thinking allows only `auto` or `none`, and `none` would forbid the answer's tool too.
    if (body.tool_choice?.type === "none") body.tool_choice = { type: "auto" };
    addSystem(body, `When you give your final answer, give it by calling the tool \`${name}\`.`);
    context.warnings.push({
      type: "compatibility",
      setting: "response_format",
      details: `the answer is asked for as a call of the tool ${name}, not forced (tools or thinking)`,
    });
  }
  return { outputTool };
}

/** The answer text an output tool's input stands for. */
export function outputToolText(input: unknown, tool: OutputTool): string {
  const value = tool.wrapped && isRecord(input) ? input.value : input;
  return JSON.stringify(value ?? {});
}

/** A call of the output tool is the answer, not a tool call: the turn ended normally. */
export function outputFinishReason(
  reason: ChatFinishReason,
  answered: boolean,
  otherToolCalls: number,
): ChatFinishReason {
  return answered && otherToolCalls === 0 && reason === "tool_calls" ? "stop" : reason;
}
