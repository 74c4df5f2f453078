import { describe, expect, it } from "vitest";
import type { ChatTool } from "../../spec/index.ts";
import { prepareAnthropicTools } from "./anthropic-prepare-tools.ts";

const weather: ChatTool = {
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("prepareAnthropicTools", () => {
  it("maps tools to name, description and input_schema", () => {
    expect(
      prepareAnthropicTools({ tools: [weather, { name: "noop" }], toolChoice: undefined }),
    ).toEqual({
      tools: [
        { name: "get_weather", description: "Current weather", input_schema: weather.parameters },
        { name: "noop", input_schema: { type: "object", properties: {} } },
      ],
    });
  });

  it("maps each tool choice", () => {
    const choice = (toolChoice: Parameters<typeof prepareAnthropicTools>[0]["toolChoice"]) =>
      prepareAnthropicTools({ tools: [weather], toolChoice }).tool_choice;
    expect(choice(undefined)).toBeUndefined();
    expect(choice("auto")).toEqual({ type: "auto" });
    expect(choice("required")).toEqual({ type: "any" });
    expect(choice({ name: "get_weather" })).toEqual({ type: "tool", name: "get_weather" });
    // The tools are still sent: Anthropic refuses tool blocks in a conversation without them.
    expect(prepareAnthropicTools({ tools: [weather], toolChoice: "none" })).toMatchObject({
      tools: [{ name: "get_weather" }],
      tool_choice: { type: "none" },
    });
  });

  it("sends nothing without tools, and disables parallel calls on request", () => {
    expect(prepareAnthropicTools({ tools: [], toolChoice: "required" })).toEqual({});
    expect(prepareAnthropicTools({ tools: undefined, toolChoice: undefined })).toEqual({});
    expect(
      prepareAnthropicTools({ tools: [weather], toolChoice: undefined, parallelToolCalls: false })
        .tool_choice,
    ).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(
      prepareAnthropicTools({ tools: [weather], toolChoice: "required", parallelToolCalls: false })
        .tool_choice,
    ).toEqual({ type: "any", disable_parallel_tool_use: true });
  });
});
