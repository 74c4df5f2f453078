import { describe, expect, it } from "vitest";
import {
  convertImageUrl,
  convertToGeminiContents,
  guessMimeType,
} from "./convert-to-gemini-contents.ts";

describe("convertToGeminiContents", () => {
  it("hoists system and developer messages and maps roles", () => {
    expect(
      convertToGeminiContents([
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        { role: "developer", content: [{ type: "text", text: "Use French." }] },
        { role: "user", content: "Again" },
      ]),
    ).toEqual({
      systemInstruction: { parts: [{ text: "Be brief." }, { text: "Use French." }] },
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "Hello" }] },
        { role: "user", parts: [{ text: "Again" }] },
      ],
      warnings: [],
    });
  });

  it("merges consecutive turns of one role and converts images", () => {
    const { contents, warnings } = convertToGeminiContents([
      { role: "user", content: "First" },
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image", url: "data:image/png;base64,iVBORw0KGgo=" },
          { type: "image", url: "https://example.com/cat.webp?size=2", detail: "high" },
        ],
      },
    ]);
    expect(contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "First" },
          { text: "Look" },
          { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
          { fileData: { mimeType: "image/webp", fileUri: "https://example.com/cat.webp?size=2" } },
        ],
      },
    ]);
    expect(warnings).toEqual([
      { type: "unsupported", setting: "image detail", details: "Gemini ignores it" },
    ]);
  });

  it("turns tool calls into functionCall parts and results into named functionResponses", () => {
    const { contents, warnings } = convertToGeminiContents([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: null,
        toolCalls: [
          { id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
          { id: "call_1", name: "get_time", arguments: "" },
        ],
      },
      { role: "tool", toolCallId: "call_0", content: "Sunny, 21 degrees" },
      { role: "tool", toolCallId: "call_1", content: '{"time":"12:00"}' },
    ]);
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
      {
        role: "model",
        parts: [
          { functionCall: { name: "get_weather", args: { city: "Paris" } } },
          { functionCall: { name: "get_time", args: {} } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { content: "Sunny, 21 degrees" } } },
          { functionResponse: { name: "get_time", response: { time: "12:00" } } },
        ],
      },
    ]);
    expect(warnings).toEqual([]);
  });

  it("warns about unmatched tool results, bad arguments and images in system messages", () => {
    const { contents, warnings } = convertToGeminiContents([
      {
        role: "system",
        content: [
          { type: "text", text: "sys" },
          { type: "image", url: "https://x.test/a.png" },
        ],
      },
      { role: "assistant", content: "", toolCalls: [{ id: "a", name: "f", arguments: "[1]" }] },
      { role: "tool", toolCallId: "missing", content: "[1, 2]" },
    ]);
    expect(contents).toEqual([
      { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
      {
        role: "user",
        parts: [{ functionResponse: { name: "missing", response: { content: "[1, 2]" } } }],
      },
    ]);
    expect(warnings.map((warning) => warning.type === "other" || warning.setting)).toEqual([
      "messages",
      "tool_calls",
      "messages",
    ]);
  });
});

describe("image helpers", () => {
  it("guesses MIME types from the path's extension, defaulting to image/jpeg", () => {
    expect(guessMimeType("https://x.test/a.PNG")).toBe("image/png");
    expect(guessMimeType("https://x.test/a.jpeg#frag")).toBe("image/jpeg");
    expect(guessMimeType("gs://bucket/doc.pdf")).toBe("application/pdf");
    expect(guessMimeType("https://x.test/image?id=1")).toBe("image/jpeg");
  });

  it("re-encodes non-base64 data URLs", () => {
    expect(convertImageUrl("data:image/svg+xml,%3Csvg%2F%3E")).toEqual({
      inlineData: { mimeType: "image/svg+xml", data: Buffer.from("<svg/>").toString("base64") },
    });
  });
});
