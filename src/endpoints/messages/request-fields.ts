/**
 * @module endpoints/messages/request-fields
 * What of a `/v1/messages` body an Anthropic route receives, so that everything sent is billed
 * as sent. The native route forwards the Messages fields it knows ({@link NATIVE_FIELDS}),
 * billed within the token usage Anthropic reports (thinking, prompt caching, context editing,
 * effort). Client tools pass, Anthropic-defined ones included (`bash_*`, `text_editor_*`,
 * `computer_*`, `memory_*`: the client runs them); server tools, which Anthropic bills per use
 * (`web_search_*`, `code_execution_*`, …), are dropped with a warning, as translated routes
 * drop them, so Claude Code keeps working. A service tier other than `auto` or
 * `standard_only` is refused on every route (400 `unsupported_parameter`). Any other top-level
 * field is dropped and named in `x-switchyard-warnings`. See docs/request-fields.md.
 */

import { droppedFieldWarnings } from "../../core/dropped-fields.ts";
import { GatewayError } from "../../errors/index.ts";
import type { CallWarning } from "../../spec/index.ts";
import type { MessagesRequest } from "./schema.ts";

/** Top-level fields an Anthropic route receives. */
export const NATIVE_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "stream",
  "tools",
  "tool_choice",
  "thinking",
  "metadata",
  "service_tier",
  "context_management",
  "output_config",
  "output_format",
]);

/** Tool types the client runs itself, billed as tokens like any client tool. */
const CLIENT_TOOL = /^(custom|bash_\d+|text_editor_\d+|computer_\d+|memory_\d+)$/;

const SERVICE_TIERS: ReadonlySet<unknown> = new Set(["auto", "standard_only"]);

/** Throws `unsupported_parameter` for an option the gateway could not bill. */
export function refuseUnbilledMessagesOptions(body: MessagesRequest): void {
  const tier = (body as Record<string, unknown>).service_tier;
  if (tier !== undefined && !SERVICE_TIERS.has(tier)) {
    throw new GatewayError(
      "unsupported_parameter",
      {
        param: "service_tier",
        detail:
          "is refused for tiers other than 'auto' and 'standard_only': the vendor bills them at other prices than this gateway charges.",
      },
      { param: "service_tier" },
    );
  }
}

type Tool = NonNullable<MessagesRequest["tools"]>[number];

/** Whether a tool runs on the client (no `type`, or a client tool type). */
export function isClientTool(tool: Tool): boolean {
  return tool.type === undefined || CLIENT_TOOL.test(tool.type);
}

/**
 * The body an Anthropic route receives: known fields only, server tools dropped (and a
 * `tool_choice` that needs a tool that is gone), each drop named in a warning.
 */
export function nativeMessagesBody(body: MessagesRequest): {
  body: Record<string, unknown>;
  warnings: CallWarning[];
} {
  const kept: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (NATIVE_FIELDS.has(key)) kept[key] = value;
    else unknown.push(key);
  }
  const warnings: CallWarning[] = [];
  if (body.tools) {
    const tools = body.tools.filter((tool) => {
      if (isClientTool(tool)) return true;
      warnings.push({
        type: "unsupported",
        setting: String(tool.type),
        details: `server tool "${tool.name}" was dropped`,
      });
      return false;
    });
    if (tools.length) kept.tools = tools;
    else delete kept.tools;
    const choice = body.tool_choice;
    const needsTool =
      choice?.type === "any" || choice?.type === "tool"
        ? tools.length === 0 ||
          (choice.type === "tool" && !tools.some((t) => t.name === choice.name))
        : false;
    if (needsTool) {
      delete kept.tool_choice;
      warnings.push({
        type: "unsupported",
        setting: "tool_choice",
        details: "its tool was dropped",
      });
    }
  }
  return { body: kept, warnings: [...warnings, ...droppedFieldWarnings(unknown)] };
}
