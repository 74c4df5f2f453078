import { describe, expect, it } from "vitest";
import { convertMessagesRequest } from "./convert-messages-request.ts";
import type { MessagesRequest } from "./schema.ts";

const ATTRIBUTION =
  "x-anthropic-billing-header: cc_version=2.1.88.a3f; cc_entrypoint=cli; cch=00000;";

/** A Claude Code main-loop request, trimmed: every quirk the converter must handle. */
const claudeCodeRequest = {
  model: "claude-sonnet-4-5",
  max_tokens: 32000,
  stream: true,
  metadata: { user_id: "user_abc_account__session_123" },
  system: [
    { type: "text", text: ATTRIBUTION },
    {
      type: "text",
      text: "You are Claude Code, Anthropic's official CLI for Claude.",
      cache_control: { type: "ephemeral" },
    },
  ],
  tools: [
    {
      name: "Bash",
      description: "Runs a shell command.",
      input_schema: { type: "object", properties: { command: { type: "string" } } },
      cache_control: { type: "ephemeral" },
    },
    { name: "web_search", type: "web_search_20250305", max_uses: 5 },
    { name: "Read", input_schema: { type: "object" } },
  ],
  tool_choice: { type: "auto" },
  thinking: { type: "enabled", budget_tokens: 31999 },
  output_config: { effort: "high" },
  context_management: { edits: [{ type: "clear_thinking_20251015" }] },
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "<system-reminder>Context</system-reminder>" },
        { type: "text", text: "List the files", cache_control: { type: "ephemeral" } },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0K" } },
        { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should run ls.", signature: "sig1" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Running ls." },
        { type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "ls" } },
        { type: "tool_use", id: "toolu_02", name: "Bash", input: { command: "cat x" } },
      ],
    },
    { role: "system", content: "The user switched to plan mode." },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_01",
          content: [
            { type: "text", text: "a.txt" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
            { type: "text", text: "b.txt" },
          ],
        },
        {
          type: "tool_result",
          tool_use_id: "toolu_02",
          content: "cat: x: No such file or directory",
          is_error: true,
        },
        { type: "text", text: "Now read the notes." },
        {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "Notes: ship it." },
        },
        {
          type: "document",
          source: { type: "base64", media_type: "application/pdf", data: "JVBERi0" },
        },
        { type: "search_result", source: "https://example.com", title: "t", content: [] },
      ],
    },
  ],
} as unknown as MessagesRequest;

describe("convertMessagesRequest", () => {
  it("converts a realistic Claude Code request", () => {
    expect(convertMessagesRequest(claudeCodeRequest, "gpt-5")).toEqual({
      options: {
        upstreamModel: "gpt-5",
        maxOutputTokens: 32000,
        user: "user_abc_account__session_123",
        messages: [
          {
            role: "system",
            content: `${ATTRIBUTION}\n\nYou are Claude Code, Anthropic's official CLI for Claude.`,
          },
          {
            role: "user",
            content: [
              { type: "text", text: "<system-reminder>Context</system-reminder>" },
              { type: "text", text: "List the files" },
              { type: "image", url: "data:image/png;base64,iVBORw0K" },
              { type: "image", url: "https://example.com/a.jpg" },
            ],
          },
          {
            role: "assistant",
            content: "Running ls.",
            reasoning: "I should run ls.",
            toolCalls: [
              { id: "toolu_01", name: "Bash", arguments: '{"command":"ls"}' },
              { id: "toolu_02", name: "Bash", arguments: '{"command":"cat x"}' },
            ],
          },
          { role: "system", content: "The user switched to plan mode." },
          { role: "tool", toolCallId: "toolu_01", content: "a.txt\nb.txt" },
          {
            role: "tool",
            toolCallId: "toolu_02",
            content: "Error: cat: x: No such file or directory",
          },
          {
            role: "user",
            content: [
              { type: "text", text: "Now read the notes." },
              { type: "text", text: "Notes: ship it." },
            ],
          },
        ],
        tools: [
          {
            name: "Bash",
            description: "Runs a shell command.",
            parameters: { type: "object", properties: { command: { type: "string" } } },
          },
          { name: "Read", parameters: { type: "object" } },
        ],
        toolChoice: "auto",
        extraBody: { reasoning_effort: "high" },
      },
      warnings: [
        {
          type: "unsupported",
          setting: "tool_result image",
          details: "images inside tool results are dropped",
        },
        {
          type: "unsupported",
          setting: "document",
          details: "only plain-text documents are supported; a base64 document was dropped",
        },
        { type: "unsupported", setting: "search_result", details: "content block dropped" },
        {
          type: "unsupported",
          setting: "web_search_20250305",
          details: 'server tool "web_search" was dropped',
        },
        { type: "compatibility", setting: "thinking", details: 'sent as reasoning_effort "high"' },
        { type: "unsupported", setting: "output_config" },
        { type: "unsupported", setting: "context_management" },
      ],
    });
  });

  it("maps sampling settings, top_k and a string system prompt", () => {
    const { options, warnings } = convertMessagesRequest(
      {
        model: "m",
        max_tokens: 100,
        system: "Be brief.",
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ["\n\nHuman:"],
        messages: [{ role: "user", content: "Hi" }],
      },
      "up",
    );
    expect(options).toEqual({
      upstreamModel: "up",
      maxOutputTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      stop: ["\n\nHuman:"],
      extraBody: { top_k: 40 },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(warnings).toEqual([]);
  });

  it.each([
    [{ type: "any" }, "required"],
    [{ type: "none" }, "none"],
    [{ type: "tool", name: "Read" }, { name: "Read" }],
  ] as const)("maps tool_choice %j", (choice, expected) => {
    const { options } = convertMessagesRequest(
      {
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        tool_choice: choice,
      },
      "up",
    );
    expect(options.toolChoice).toEqual(expected);
  });

  it("sends disable_parallel_tool_use as parallel_tool_calls: false", () => {
    const { options } = convertMessagesRequest(
      {
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
        tools: [{ name: "Read" }],
        tool_choice: { type: "auto", disable_parallel_tool_use: true },
      },
      "up",
    );
    expect(options.extraBody).toEqual({ parallel_tool_calls: false });
  });

  it.each([
    [{ type: "enabled", budget_tokens: 2000 }, "low"],
    [{ type: "enabled", budget_tokens: 4000 }, "medium"],
    [{ type: "enabled", budget_tokens: 16000 }, "high"],
    [{ type: "adaptive" }, "medium"],
  ] as const)("maps thinking %j to reasoning_effort %s", (thinking, effort) => {
    const { options, warnings } = convertMessagesRequest(
      { model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }], thinking },
      "up",
    );
    expect(options.extraBody).toEqual({ reasoning_effort: effort });
    expect(warnings).toEqual([
      {
        type: "compatibility",
        setting: "thinking",
        details: `sent as reasoning_effort "${effort}"`,
      },
    ]);
  });

  it("ignores disabled thinking and warns once per unknown top-level field", () => {
    const { options, warnings } = convertMessagesRequest(
      {
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
        thinking: { type: "disabled" },
        betas: ["a"],
        container: "c",
      } as MessagesRequest,
      "up",
    );
    expect(options.extraBody).toBeUndefined();
    expect(warnings).toEqual([
      { type: "unsupported", setting: "betas" },
      { type: "unsupported", setting: "container" },
    ]);
  });

  it("drops a tool choice that forces a tool when only server tools were sent", () => {
    const { options, warnings } = convertMessagesRequest(
      {
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
        tools: [{ name: "bash", type: "bash_20250124" }],
        tool_choice: { type: "any" },
      },
      "up",
    );
    expect(options.tools).toBeUndefined();
    expect(options.toolChoice).toBeUndefined();
    expect(warnings).toEqual([
      { type: "unsupported", setting: "bash_20250124", details: 'server tool "bash" was dropped' },
      { type: "unsupported", setting: "tool_choice", details: "no client tools" },
    ]);
  });

  it("keeps tool-only assistant turns with null content and drops malformed blocks", () => {
    const { options, warnings } = convertMessagesRequest(
      {
        model: "m",
        max_tokens: 10,
        messages: [
          { role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] },
          {
            role: "assistant",
            content: [
              { type: "tool_use", id: "call_1", name: "Read", input: {} },
              { type: "server_tool_use", id: "srv", name: "web_search", input: {} },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1" }] },
        ],
      } as unknown as MessagesRequest,
      "up",
    );
    expect(options.messages).toEqual([
      {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "call_1", name: "Read", arguments: "{}" }],
      },
      { role: "tool", toolCallId: "call_1", content: "" },
    ]);
    expect(warnings).toEqual([
      { type: "unsupported", setting: "image", details: "image source type file dropped" },
      { type: "unsupported", setting: "server_tool_use", details: "content block dropped" },
    ]);
  });
});
