import { describe, expect, it } from "vitest";
import { convertToGeminiRequest } from "./convert-to-gemini-request.ts";

const base = {
  upstreamModel: "gemini-2.5-flash",
  messages: [{ role: "user" as const, content: "Hi" }],
};

describe("convertToGeminiRequest", () => {
  it("sends only contents when nothing else is set", () => {
    expect(convertToGeminiRequest(base)).toEqual({
      body: { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
      warnings: [],
    });
  });

  it("maps sampling settings into generationConfig", () => {
    const { body, warnings } = convertToGeminiRequest({
      ...base,
      maxOutputTokens: 100,
      temperature: 0.5,
      topP: 0.9,
      stop: ["END"],
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 7,
    });
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 100,
      temperature: 0.5,
      topP: 0.9,
      stopSequences: ["END"],
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 7,
    });
    expect(warnings).toEqual([]);
  });

  it("maps response formats to responseMimeType and responseSchema", () => {
    expect(
      convertToGeminiRequest({ ...base, responseFormat: { type: "json_object" } }).body
        .generationConfig,
    ).toEqual({
      responseMimeType: "application/json",
    });
    const schema = {
      type: "object",
      properties: { answer: { type: "string" } },
      required: ["answer"],
      additionalProperties: false,
    };
    expect(
      convertToGeminiRequest({
        ...base,
        responseFormat: { type: "json_schema", name: "reply", schema, strict: true },
      }).body.generationConfig,
    ).toEqual({
      responseMimeType: "application/json",
      responseSchema: {
        type: "object",
        properties: { answer: { type: "string" } },
        required: ["answer"],
      },
    });
    expect(
      convertToGeminiRequest({ ...base, responseFormat: { type: "text" } }).body,
    ).not.toHaveProperty("generationConfig");
  });

  it("maps reasoning_effort to thinkingConfig", () => {
    const config = (effort: unknown) =>
      convertToGeminiRequest({ ...base, extraBody: { reasoning_effort: effort } });
    expect(config("high").body.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 24576, includeThoughts: true },
    });
    expect(config("none").body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(config("extreme").warnings).toEqual([
      {
        type: "unsupported",
        setting: "reasoning_effort",
        details: "expected one of none, low, medium, high",
      },
    ]);
  });

  it("warns about what Gemini cannot take", () => {
    const { body, warnings } = convertToGeminiRequest({
      ...base,
      user: "u-1",
      stop: ["a", "b", "c", "d", "e", "f"],
      extraBody: { logprobs: true },
    });
    expect((body.generationConfig as { stopSequences: string[] }).stopSequences).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
    expect(warnings).toEqual([
      {
        type: "compatibility",
        setting: "stop",
        details: "Gemini takes at most 5 stop sequences; the rest were dropped",
      },
      { type: "unsupported", setting: "user" },
      { type: "unsupported", setting: "logprobs" },
    ]);
  });

  it("adds the system instruction, tools and tool config", () => {
    const { body } = convertToGeminiRequest({
      ...base,
      messages: [{ role: "system", content: "Terse." }, ...base.messages],
      tools: [{ name: "ping" }],
      toolChoice: "none",
    });
    expect(body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
      systemInstruction: { parts: [{ text: "Terse." }] },
      tools: [{ functionDeclarations: [{ name: "ping" }] }],
      toolConfig: { functionCallingConfig: { mode: "NONE" } },
    });
  });
});
