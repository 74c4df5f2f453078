/**
 * Rate and concurrency quotas against a hostile client (docs/configuration.md, limits): the one
 * concurrency slot of a key comes back after every kind of failed or abandoned request, a
 * request refused for concurrency spends no rpm, a stream the client cuts short counts its
 * delivered tokens against tpm, and MCP tool calls and HTTP requests share one key's slot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QuotaSnapshot } from "../src/limits/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { connectMcp } from "./support/mcp-client.ts";
import { waitFor } from "./support/sandbox-stats.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const chat = (content: string, extra: Record<string, unknown> = {}, system?: string) => ({
  model: "gpt-4o-mini",
  max_tokens: 50,
  messages: [...(system ? [{ role: "system", content: system }] : []), { role: "user", content }],
  ...extra,
});

describe("quotas against a hostile client", () => {
  let gateway: TestGateway;
  const inFlight = async (keyId: string) =>
    await (gateway.services.quotas as unknown as QuotaSnapshot).inFlight(keyId);

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        upstream: { connect_timeout_ms: 1000, first_byte_timeout_ms: 1500, idle_timeout_ms: 1500 },
      },
    });
  });
  afterAll(() => gateway.close());

  const post = (key: string, json: unknown, init: RequestInit = {}) =>
    gateway.request("/v1/chat/completions", { key, json, ...init });

  it("frees the single concurrency slot after every kind of failed or abandoned request", async () => {
    const user = await createUser(gateway, { keyOptions: { concurrency: 1 } });
    const free = async (label: string) => {
      const count = await waitFor(
        async () => inFlight(user.keyId),
        (value) => value === 0,
        5_000,
      );
      expect(count, `slot still held after: ${label}`).toBe(0);
      const next = await post(user.key, chat("next"));
      expect(next.status, `next request after: ${label}`).toBe(200);
      await next.arrayBuffer();
    };
    // upstream 500, non-stream and stream
    let r = await post(user.key, chat("x", {}, "[[sandbox:status=500]]"));
    expect(r.status).toBeGreaterThanOrEqual(500);
    await r.arrayBuffer();
    await free("upstream 500");
    r = await post(user.key, chat("x", { stream: true }, "[[sandbox:status=500]]"));
    await r.arrayBuffer();
    await free("upstream 500 stream");
    // stream dropped mid-way by the upstream
    r = await post(user.key, chat("x", { stream: true }, "[[sandbox:drop=2;chunk-delay=20]]"));
    await r.arrayBuffer().catch(() => {});
    await free("dropped stream");
    // malformed mid-stream frame
    r = await post(user.key, chat("x", { stream: true }, "[[sandbox:malformed=2]]"));
    await r.arrayBuffer().catch(() => {});
    await free("malformed stream");
    // client aborts while the upstream hangs before headers
    let controller = new AbortController();
    const hung = post(user.key, chat("x", { stream: true }, "[[sandbox:hang]]"), {
      signal: controller.signal,
    }).catch((e) => e);
    await sleep(300);
    controller.abort();
    await hung;
    await free("aborted while upstream hangs");
    // client aborts a stream right after its first chunk
    controller = new AbortController();
    r = await post(user.key, chat("x", { stream: true }, "[[sandbox:chunk-delay=200;words=40]]"), {
      signal: controller.signal,
    });
    expect(r.status).toBe(200);
    await r.body!.getReader().read();
    controller.abort();
    await free("aborted stream");
    // upstream first-byte timeout
    r = await post(user.key, chat("x", {}, "[[sandbox:delay=4000]]"));
    await r.arrayBuffer();
    await free("upstream timeout");
  }, 60_000);

  it("a request refused for concurrency does not spend the key's rpm", async () => {
    const user = await createUser(gateway, { keyOptions: { concurrency: 1, rpm: 3 } });
    const stream = await post(
      user.key,
      chat("x", { stream: true }, "[[sandbox:chunk-delay=60;words=20]]"),
    );
    expect(stream.status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const r = await post(user.key, chat("refused"));
      expect(r.status).toBe(429);
      expect(r.headers.get("x-switchyard-limit")).toBe("concurrency");
      await r.arrayBuffer();
    }
    await stream.text();
    await waitFor(
      async () => inFlight(user.keyId),
      (v) => v === 0,
      3_000,
    );
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(user.key, chat("after"));
      statuses.push(r.status);
      await r.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("a stream cut short by the client counts its delivered tokens against tpm", async () => {
    const user = await createUser(gateway, { keyOptions: { tpm: 10 } });
    const controller = new AbortController();
    const r = await post(
      user.key,
      chat(
        "a prompt that is longer than ten tokens for sure, yes it is",
        { stream: true },
        "[[sandbox:chunk-delay=100;words=60]]",
      ),
      { signal: controller.signal },
    );
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    for (let i = 0; i < 4; i++) await reader.read();
    controller.abort();
    await sleep(500);
    const next = await post(user.key, chat("next"));
    expect(next.status).toBe(429);
    expect(next.headers.get("x-switchyard-limit")).toBe("tpm");
  });

  it("MCP tool calls and HTTP requests share one key's concurrency slot", async () => {
    const user = await createUser(gateway, { keyOptions: { concurrency: 1 } });
    const stream = await post(
      user.key,
      chat("x", { stream: true }, "[[sandbox:chunk-delay=100;words=20]]"),
    );
    expect(stream.status).toBe(200);
    const client = await connectMcp(gateway, user.key);
    const result = (await client.callTool({
      name: "chat",
      arguments: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    })) as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/^429 concurrency_limited/);
    await stream.text();
    // and the other way round
    const mcp = client.callTool({
      name: "chat",
      arguments: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "[[sandbox:delay=1500]] hi" }],
      },
    });
    await sleep(400);
    const http = await post(user.key, chat("y"));
    expect(http.status).toBe(429);
    await mcp;
    await client.close();
  });
});
