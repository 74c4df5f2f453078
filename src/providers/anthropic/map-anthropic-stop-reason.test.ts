import { describe, expect, it } from "vitest";
import { mapAnthropicStopReason } from "./map-anthropic-stop-reason.ts";

describe("mapAnthropicStopReason", () => {
  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
    ["pause_turn", "other"],
    [null, "other"],
    [undefined, "other"],
  ])("maps %s to %s", (reason, expected) => {
    expect(mapAnthropicStopReason(reason)).toBe(expected);
  });
});
