/**
 * `generate_video` with `wait: true` keeps its MCP call open while the task runs. That wait is a
 * request in flight of the key: it takes a concurrency slot (and one request of the per-minute
 * rate) like any other, or a client could keep any number of waits open against a key limited
 * to one. A wait the key's quotas refuse is not an error (the task was started and holds its
 * money): the task comes back at once, unwaited, with a note saying why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { connectMcp } from "./support/mcp-client.ts";

const SLOW = "[[sandbox:video-seconds=3]] a lighthouse";

describe("MCP generate_video: a wait counts against the key's quotas", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it("holds a concurrency slot while it waits, and a second wait beyond the limit is not taken", async () => {
    const user = await createUser(gateway, {
      balanceMicros: 100_000_000,
      keyOptions: { concurrency: 1 },
    });
    const client = await connectMcp(gateway, user.key);
    const waiting = client.callTool(
      { name: "generate_video", arguments: { model: "gen-video", prompt: SLOW, wait: true } },
      undefined,
      { timeout: 60_000 },
    );
    // While the first call waits, the key's one slot is taken: a chat request is refused.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const chat = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    });
    expect(chat.status).toBe(429);
    await chat.text();

    // A second call is a second request in flight: refused, its task never started.
    const second = await client.callTool({
      name: "generate_video",
      arguments: { model: "gen-video", prompt: SLOW, wait: true },
    });
    expect(second.isError).toBe(true);
    expect((second.content as Array<{ text: string }>)[0]!.text).toMatch(/^429 /);

    const first = await waiting;
    expect((first.structuredContent as { status: string }).status).toBe("succeeded");
    // The slot is free again once the wait ended.
    const after = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    });
    expect(after.status).toBe(200);
    await after.text();
    await client.close();
  });

  it("returns the task at once, unwaited and saying why, when the key's quotas refuse the wait", async () => {
    // One request a minute: the submission takes it; the wait would be a second.
    const user = await createUser(gateway, { balanceMicros: 100_000_000, keyOptions: { rpm: 1 } });
    const client = await connectMcp(gateway, user.key);
    const started = Date.now();
    const result = await client.callTool(
      { name: "generate_video", arguments: { model: "gen-video", prompt: SLOW, wait: true } },
      undefined,
      { timeout: 60_000 },
    );
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(result.isError).toBeFalsy();
    const task = result.structuredContent as { id: string; status: string };
    expect(task.id).toMatch(/^vtask_/);
    expect(["queued", "running"]).toContain(task.status);
    const texts = (result.content as Array<{ type: string; text?: string }>)
      .filter((block) => block.type === "text")
      .map((block) => block.text);
    expect(texts.join(" ")).toMatch(/not waited/i);
    await client.close();
  });
});
