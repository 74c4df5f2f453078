import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../spec/index.ts";
import { convertImageUrl, convertToAnthropicMessages } from "./convert-to-anthropic-messages.ts";

const PIXEL = "data:image/png;base64,iVBORw0KGgo=";

describe("convertToAnthropicMessages", () => {
  it("moves system and developer messages into the system text", () => {
    const result = convertToAnthropicMessages([
      { role: "system", content: "You are terse." },
      { role: "developer", content: [{ type: "text", text: "Use metric units." }] },
      { role: "user", content: "Hi" },
    ]);
    expect(result).toEqual({
      system: "You are terse.\n\nUse metric units.",
      messages: [{ role: "user", content: "Hi" }],
      warnings: [],
    });
  });

  it("warns when a system message comes after the first turn", () => {
    const result = convertToAnthropicMessages([
      { role: "user", content: "Hi" },
      { role: "system", content: "Late rule." },
    ]);
    expect(result.system).toBe("Late rule.");
    expect(result.warnings).toEqual([
      expect.objectContaining({ type: "compatibility", setting: "system message position" }),
    ]);
  });

  it("converts images from data URLs and https URLs, and drops others with a warning", () => {
    const result = convertToAnthropicMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "Compare" },
          { type: "image", url: PIXEL },
          { type: "image", url: "https://example.com/cat.jpg", detail: "high" },
          { type: "image", url: "ftp://example.com/cat.jpg" },
        ],
      },
    ]);
    expect(result.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Compare" },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
          },
          { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        ],
      },
    ]);
    expect(
      result.warnings.map((warning) => warning.type === "unsupported" && warning.setting),
    ).toEqual(["image detail", "image url"]);
    expect(convertImageUrl("data:image/png,notbase64")).toBeUndefined();
  });

  it("turns tool calls into tool_use and merges consecutive tool results into one user turn", () => {
    const prompt: ChatMessage[] = [
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        toolCalls: [
          { id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          { id: "toolu_2", name: "get_weather", arguments: "" },
        ],
      },
      { role: "tool", toolCallId: "toolu_1", content: "Sunny" },
      { role: "tool", toolCallId: "toolu_2", content: [{ type: "text", text: "Rain" }] },
      { role: "user", content: "Thanks" },
    ];
    expect(convertToAnthropicMessages(prompt).messages).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "Sunny" },
          {
            type: "tool_result",
            tool_use_id: "toolu_2",
            content: [{ type: "text", text: "Rain" }],
          },
          { type: "text", text: "Thanks" },
        ],
      },
    ]);
  });

  it("merges consecutive same-role turns and trims a final assistant turn", () => {
    const result = convertToAnthropicMessages([
      { role: "user", content: "One" },
      { role: "user", content: [{ type: "text", text: "Two" }] },
      { role: "assistant", content: "Partial answer  " },
    ]);
    expect(result.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "One" },
          { type: "text", text: "Two" },
        ],
      },
      { role: "assistant", content: "Partial answer" },
    ]);
  });

  it("drops reasoning, names, empty assistant turns and bad arguments with warnings", () => {
    const result = convertToAnthropicMessages([
      { role: "user", content: "Hi", name: "alice" },
      { role: "assistant", content: null, reasoning: "hidden thoughts" },
      { role: "assistant", content: "", toolCalls: [{ id: "t", name: "f", arguments: "[1,2]" }] },
    ]);
    expect(result.messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] },
    ]);
    expect(
      result.warnings.map((warning) => (warning.type === "other" ? "" : warning.setting)),
    ).toEqual(["message name", "reasoning", "tool call arguments"]);
  });
});
