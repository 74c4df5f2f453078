import { describe, expect, it } from "vitest";
import { mapDashScopeTaskStatus } from "./map-dashscope-task-status.ts";

describe("mapDashScopeTaskStatus", () => {
  it("maps each documented task status", () => {
    expect(mapDashScopeTaskStatus("PENDING")).toBe("queued");
    expect(mapDashScopeTaskStatus("RUNNING")).toBe("running");
    expect(mapDashScopeTaskStatus("SUCCEEDED")).toBe("succeeded");
    expect(mapDashScopeTaskStatus("FAILED")).toBe("failed");
    expect(mapDashScopeTaskStatus("CANCELED")).toBe("canceled");
    expect(mapDashScopeTaskStatus("UNKNOWN")).toBe("expired");
  });

  it("knows nothing else (other spellings, absent, other types)", () => {
    for (const status of ["pending", "CANCELLED", "DONE", "", undefined, null, 1]) {
      expect(mapDashScopeTaskStatus(status), String(status)).toBeUndefined();
    }
  });
});
