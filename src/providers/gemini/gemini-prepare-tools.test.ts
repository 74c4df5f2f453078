import { describe, expect, it } from "vitest";
import { prepareGeminiTools, toGeminiToolConfig } from "./gemini-prepare-tools.ts";

const weather = {
  name: "get_weather",
  description: "Current weather",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
};

describe("prepareGeminiTools", () => {
  it("puts every function in one functionDeclarations list", () => {
    expect(
      prepareGeminiTools([weather, { name: "ping", parameters: { type: "object" } }], undefined),
    ).toEqual({
      tools: [
        {
          functionDeclarations: [
            {
              name: "get_weather",
              description: "Current weather",
              parameters: {
                type: "object",
                properties: { city: { type: "string" } },
                required: ["city"],
              },
            },
            { name: "ping" },
          ],
        },
      ],
      warnings: [],
    });
  });

  it("maps tool choices to function calling modes", () => {
    expect(toGeminiToolConfig("auto")).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    expect(toGeminiToolConfig("none")).toEqual({ functionCallingConfig: { mode: "NONE" } });
    expect(toGeminiToolConfig("required")).toEqual({ functionCallingConfig: { mode: "ANY" } });
    expect(toGeminiToolConfig({ name: "get_weather" })).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] },
    });
    expect(prepareGeminiTools([weather], "required").toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY" },
    });
  });

  it("drops a tool choice without tools, warning when it forced a call", () => {
    expect(prepareGeminiTools(undefined, "none")).toEqual({ warnings: [] });
    expect(prepareGeminiTools([], { name: "f" })).toEqual({
      warnings: [{ type: "unsupported", setting: "tool_choice", details: "no tools were given" }],
    });
  });
});
