import { describe, expect, it } from "vitest";
import { parseChatRequest } from "./chat-request.ts";
import { parseCountTokensRequest, parseGeminiRequest } from "./gemini-request.ts";

const user = (text: string) => ({ role: "user", parts: [{ text }] });

function parsed(body: Record<string, unknown>) {
  const result = parseGeminiRequest(body, "gemini-2.5-flash", false);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

function rejection(body: unknown): string {
  const result = parseGeminiRequest(body, "gemini-2.5-flash", false);
  if (result.ok) throw new Error("expected a rejection");
  return result.message;
}

const weather = {
  name: "get_weather",
  parameters: {
    type: "OBJECT",
    properties: { city: { type: "STRING" } },
    required: ["city"],
  },
};

describe("parseGeminiRequest normalization", () => {
  it("rebuilds the OpenAI messages the planner seeds on", () => {
    const gemini = parsed({
      systemInstruction: { parts: [{ text: "You are terse." }] },
      contents: [user("Conformance text case")],
    });
    const openai = parseChatRequest({
      model: "gemini-2.5-flash",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Conformance text case" },
      ],
    });
    if (!openai.ok) throw new Error(openai.error.message);
    expect(gemini.chat).toEqual({ ...openai.request, stream: false, includeUsage: false });
  });

  it("maps model turns, function calls and responses, and counts images", () => {
    const { chat } = parsed({
      contents: [
        {
          role: "user",
          parts: [
            { text: "Look" },
            { inlineData: { mimeType: "image/png", data: "AAAA" } },
            { fileData: { mimeType: "image/jpeg", fileUri: "https://x.test/a.jpg" } },
            { inlineData: { mimeType: "application/pdf", data: "AAAA" } },
          ],
        },
        {
          role: "model",
          parts: [
            { text: "hidden", thought: true },
            { functionCall: { name: "get_weather", args: { city: "Paris" } } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { content: "Sunny" } } },
            { functionResponse: { name: "other", response: { temp: 21 } } },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", text: "Look", imageCount: 2 },
      { role: "assistant", text: "", imageCount: 0 },
      { role: "tool", text: "Sunny", imageCount: 0 },
      { role: "tool", text: '{"temp":21}', imageCount: 0 },
    ]);
    expect(chat.rawMessages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        { type: "image_url", image_url: { url: "https://x.test/a.jpg" } },
        { type: "image_url", image_url: { url: "data:application/pdf;base64,AAAA" } },
      ],
    });
    expect(chat.rawMessages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      ],
    });
  });

  it("reads tools, tool config, the token cap, JSON mode and thinking", () => {
    const request = parsed({
      contents: [user("hi")],
      tools: [{ functionDeclarations: [weather, { name: "noop" }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["noop"] } },
      generationConfig: {
        maxOutputTokens: 7,
        responseMimeType: "application/json",
        thinkingConfig: { includeThoughts: true, thinkingBudget: 64 },
      },
    });
    expect(request.chat.tools).toEqual([
      {
        name: "get_weather",
        parameters: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      },
      { name: "noop", parameters: undefined },
    ]);
    expect(request.chat.toolChoice).toEqual({ name: "noop" });
    expect(request.chat.maxTokens).toBe(7);
    expect(request.chat.jsonObject).toBe(true);
    expect(request).toMatchObject({ includeThoughts: true, thinkingBudget: 64 });
    const none = parsed({
      contents: [user("hi")],
      toolConfig: { function_calling_config: { mode: "NONE" } },
      generation_config: { thinking_config: { include_thoughts: true, thinking_budget: 0 } },
    });
    expect(none.chat.toolChoice).toBe("none");
    expect(none.includeThoughts).toBe(false);
  });

  it("reads countTokens bodies in both forms", () => {
    const plain = parseCountTokensRequest({ contents: [user("a b c")] }, "m");
    expect(plain.ok && plain.value).toEqual([{ role: "user", text: "a b c", imageCount: 0 }]);
    const wrapped = parseCountTokensRequest(
      {
        generateContentRequest: {
          systemInstruction: { parts: [{ text: "sys" }] },
          contents: [user("a")],
        },
      },
      "m",
    );
    expect(wrapped.ok && wrapped.value.map((message) => message.role)).toEqual(["system", "user"]);
  });
});

describe("parseGeminiRequest validation", () => {
  it("rejects missing or empty contents, roles and parts as Google does", () => {
    expect(rejection({})).toBe("* GenerateContentRequest.contents: contents is not specified\n");
    expect(rejection({ contents: [] })).toMatch(/contents is not specified/);
    expect(rejection([])).toMatch(/Root element must be a message/);
    expect(rejection({ contents: [{ role: "assistant", parts: [{ text: "x" }] }] })).toBe(
      "Please use a valid role: user, model.",
    );
    expect(rejection({ contents: [{ role: "user", parts: [] }] })).toBe(
      "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n",
    );
    expect(rejection({ contents: [{ role: "user", parts: [{}] }] })).toMatch(
      /contents\[0\]\.parts\[0\]\.data: required oneof field 'data'/,
    );
    expect(rejection({ contents: [{ parts: [{ text: 5 }] }] })).toBe(
      "Invalid value at 'contents[0].parts[0].text' (TYPE_STRING), 5",
    );
    expect(rejection({ contents: [{ parts: [{ image: "x" }] }] })).toBe(
      `Invalid JSON payload received. Unknown name "image" at 'contents[0].parts[0]': Cannot find field.`,
    );
    expect(
      rejection({ contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "!!" } }] }] }),
    ).toMatch(/inline_data\.data' \(TYPE_BYTES\), Base64 decoding failed/);
    expect(rejection({ contents: [{ parts: [{ functionCall: { args: {} } }] }] })).toMatch(
      /function_call\.name: Name cannot be empty/,
    );
    expect(rejection({ contents: [user("x")], messages: [] })).toMatch(/Unknown name "messages"/);
  });

  it("checks generationConfig field names and types", () => {
    const config = (generationConfig: unknown) =>
      rejection({ contents: [user("x")], generationConfig });
    expect(config({ max_tokens: 5 })).toBe(
      `Invalid JSON payload received. Unknown name "max_tokens" at 'generation_config': Cannot find field.`,
    );
    expect(config({ maxOutputTokens: "5" })).toBe(
      `Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), "5"`,
    );
    expect(config({ temperature: "hot" })).toMatch(
      /'generation_config.temperature' \(TYPE_FLOAT\)/,
    );
    expect(config({ stopSequences: "END" })).toMatch(/stop_sequences/);
    expect(config({ responseMimeType: "text/html" })).toMatch(/allowed mimetypes are/);
    expect(config({ responseSchema: { type: "OBJECT", properties: { a: {} } } })).toMatch(
      /response_schema: response_mime_type must be set/,
    );
    expect(config({ thinkingConfig: { includeThoughts: "yes" } })).toMatch(/TYPE_BOOL/);
  });

  it("rejects JSON Schema keywords and bad names in function declarations", () => {
    const tools = (declaration: unknown) =>
      rejection({ contents: [user("x")], tools: [{ functionDeclarations: [declaration] }] });
    expect(
      tools({
        name: "f",
        parameters: { type: "object", additionalProperties: false, properties: { a: {} } },
      }),
    ).toBe(
      `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`,
    );
    expect(
      tools({ name: "f", parameters: { type: "object", properties: { a: { $schema: "x" } } } }),
    ).toMatch(/Unknown name "\$schema" at '.*parameters\.properties\[a\]\.value'/);
    expect(
      tools({
        name: "f",
        parameters: { type: "object", properties: { a: { type: ["string", "null"] } } },
      }),
    ).toMatch(/Invalid value at '.*properties\[a\]\.value\.type'/);
    expect(tools({ name: "f", parameters: { type: "object", properties: {} } })).toMatch(
      /parameters\.properties: should be non-empty for OBJECT type/,
    );
    expect(tools({ name: "9 bad" })).toMatch(/Invalid function name/);
  });

  it("checks toolConfig modes", () => {
    const config = (functionCallingConfig: unknown) =>
      rejection({ contents: [user("x")], toolConfig: { functionCallingConfig } });
    expect(config({ mode: "REQUIRED" })).toMatch(/function_calling_config\.mode/);
    expect(config({ mode: "AUTO", allowedFunctionNames: ["f"] })).toMatch(
      /allowed_function_names: only allowed when mode is ANY/,
    );
  });
});
