/**
 * @module providers/gemini/gemini-prepare-tools
 * Builds Gemini's `tools` (one entry holding every `functionDeclarations`) and `toolConfig` from
 * normalized tools and tool choice: `auto` → AUTO, `none` → NONE, `required` → ANY, a named
 * function → ANY with `allowedFunctionNames`. Parameter schemas go through
 * `convertJsonSchemaToGemini`; a tool choice without tools is dropped with a warning.
 * @see https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes
 */
import type { CallWarning, ChatTool, ChatToolChoice } from "../../spec/index.ts";
import { convertJsonSchemaToGemini } from "./convert-json-schema-to-gemini.ts";
import type { GeminiFunctionDeclaration, GeminiToolConfig } from "./gemini-api-types.ts";

export interface PreparedGeminiTools {
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: GeminiToolConfig;
  warnings: CallWarning[];
}

export function toGeminiToolConfig(choice: ChatToolChoice): GeminiToolConfig {
  if (typeof choice === "object")
    return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.name] } };
  const mode = choice === "none" ? "NONE" : choice === "required" ? "ANY" : "AUTO";
  return { functionCallingConfig: { mode } };
}

export function prepareGeminiTools(
  tools: ChatTool[] | undefined,
  toolChoice: ChatToolChoice | undefined,
): PreparedGeminiTools {
  if (!tools?.length) {
    const warnings: CallWarning[] =
      toolChoice === undefined || toolChoice === "none" || toolChoice === "auto"
        ? []
        : [{ type: "unsupported", setting: "tool_choice", details: "no tools were given" }];
    return { warnings };
  }
  const functionDeclarations = tools.map((tool): GeminiFunctionDeclaration => {
    const parameters = convertJsonSchemaToGemini(tool.parameters);
    return {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      ...(parameters ? { parameters } : {}),
    };
  });
  return {
    tools: [{ functionDeclarations }],
    ...(toolChoice === undefined ? {} : { toolConfig: toGeminiToolConfig(toolChoice) }),
    warnings: [],
  };
}
