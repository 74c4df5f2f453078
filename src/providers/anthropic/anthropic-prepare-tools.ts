/**
 * @module providers/anthropic/anthropic-prepare-tools
 * Maps normalized tools and tool choice to Anthropic's `tools` / `tool_choice`:
 * `auto` → `{type:"auto"}`, `required` → `{type:"any"}`, `{name}` → `{type:"tool", name}`,
 * `none` → `{type:"none"}` with the tools still sent (Anthropic refuses a conversation with
 * `tool_use` or `tool_result` blocks and no `tools`). A tool without parameters gets an empty object schema (Anthropic
 * requires `input_schema`). `parallel_tool_calls: false` becomes `disable_parallel_tool_use`.
 * @see https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
 */
import type { ChatTool, ChatToolChoice } from "../../spec/index.ts";
import type { AnthropicTool, AnthropicToolChoice } from "./anthropic-api.ts";

export interface PreparedTools {
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
}

export function prepareAnthropicTools(input: {
  tools: ChatTool[] | undefined;
  toolChoice: ChatToolChoice | undefined;
  parallelToolCalls?: boolean;
}): PreparedTools {
  const { tools, toolChoice } = input;
  if (!tools?.length) return {};
  const prepared: PreparedTools = {
    tools: tools.map((tool) => ({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      input_schema: tool.parameters ?? { type: "object", properties: {} },
    })),
  };
  const disable = input.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (toolChoice === "none") {
    prepared.tool_choice = { type: "none" };
  } else if (toolChoice === undefined || toolChoice === "auto") {
    if (toolChoice === "auto" || input.parallelToolCalls === false) {
      prepared.tool_choice = { type: "auto", ...disable };
    }
  } else if (toolChoice === "required") {
    prepared.tool_choice = { type: "any", ...disable };
  } else {
    prepared.tool_choice = { type: "tool", name: toolChoice.name, ...disable };
  }
  return prepared;
}
