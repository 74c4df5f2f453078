import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

describe("streaming behaviour", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1, sse_heartbeat_ms: 100 },
      },
    });
  });
  afterAll(() => gateway.close());

  const stream = (content: string) =>
    gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: { model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content }] },
    });

  it("sends a comment heartbeat while the upstream is silent", async () => {
    const response = await stream("[[sandbox:chunk-delay=350;words=6]] slow");
    const text = await response.text();
    expect(text).toContain(": keep-alive\n\n");
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
  });

  it("sends no heartbeat when the upstream keeps talking", async () => {
    const text = await (await stream("[[sandbox:words=12]] fast")).text();
    expect(text).not.toContain("keep-alive");
  });

  it("ends with an error frame, never a hang, when the upstream breaks after the first byte", async () => {
    for (const fault of ["drop=2", "malformed=2"]) {
      const text = await (await stream(`[[sandbox:${fault}]] break`)).text();
      const frames = text.split("\n\n").filter(Boolean);
      expect(frames.at(-1)).toMatch(
        /^data: \{"error":\{"message":".+","type":"upstream_error","code":"upstream_error"\}\}$/,
      );
      expect(text).not.toContain("[DONE]");
    }
  });
});
