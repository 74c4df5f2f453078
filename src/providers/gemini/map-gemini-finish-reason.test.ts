import { describe, expect, it } from "vitest";
import { mapGeminiFinishReason } from "./map-gemini-finish-reason.ts";

describe("mapGeminiFinishReason", () => {
  it("maps STOP to stop, or tool_calls when the answer called functions", () => {
    expect(mapGeminiFinishReason("STOP", false)).toBe("stop");
    expect(mapGeminiFinishReason("STOP", true)).toBe("tool_calls");
  });

  it("maps caps, filters and the rest", () => {
    expect(mapGeminiFinishReason("MAX_TOKENS", false)).toBe("length");
    for (const reason of [
      "SAFETY",
      "RECITATION",
      "BLOCKLIST",
      "PROHIBITED_CONTENT",
      "SPII",
      "IMAGE_SAFETY",
    ])
      expect(mapGeminiFinishReason(reason, false)).toBe("content_filter");
    expect(mapGeminiFinishReason("MALFORMED_FUNCTION_CALL", false)).toBe("error");
    expect(mapGeminiFinishReason("OTHER", false)).toBe("other");
    expect(mapGeminiFinishReason(undefined, false)).toBe("other");
  });
});
