import { describe, expect, it } from "vitest";
import type { ChatFinishReason } from "../../spec/index.ts";
import { mapToAnthropicStopReason, stopReasonFor } from "./map-to-anthropic-stop-reason.ts";

describe("mapToAnthropicStopReason", () => {
  it.each<[ChatFinishReason, string]>([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
    ["error", "end_turn"],
    ["other", "end_turn"],
  ])("maps %s to %s", (reason, expected) => {
    expect(mapToAnthropicStopReason(reason)).toBe(expected);
  });
});

describe("stopReasonFor", () => {
  it("answers tool_use for stop or other when tools were called, and keeps the rest", () => {
    expect(stopReasonFor("stop", true)).toBe("tool_use");
    expect(stopReasonFor("other", true)).toBe("tool_use");
    expect(stopReasonFor("length", true)).toBe("max_tokens");
    expect(stopReasonFor("stop", false)).toBe("end_turn");
  });
});
