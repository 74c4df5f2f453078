/**
 * The MCP endpoint against a hostile client: a cancelled call is charged nothing and frees its
 * slot; calls on one session obey the key's concurrency, rpm and spend cap; a revoked key is
 * refused on its open session; oversized, deep, batched or mistyped messages change nothing;
 * another key cannot use, watch, cancel or end a session, nor read its tasks or usage.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { connectMcp, postOnSession, sessionIdOf } from "./support/mcp-client.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as { text?: string }[])[0]?.text ?? "";
const chat = (delayMs: number) => ({
  name: "chat",
  arguments: {
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: `[[sandbox:delay=${delayMs}]] hi` }],
  },
});
const post = postOnSession;

describe("MCP controls", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it("notifications/cancelled aborts the call: charged nothing, slot freed", async () => {
    const user = await createUser(gateway, {
      balanceMicros: 5_000_000,
      keyOptions: { concurrency: 1 },
    });
    const client = await connectMcp(gateway, user.key);
    const stop = new AbortController();
    const call = client.callTool(chat(3000), undefined, { signal: stop.signal }).catch((e) => e);
    await sleep(400);
    stop.abort();
    await call;
    await sleep(200);
    const next = await client.callTool(chat(1));
    expect(next.isError).toBeFalsy();
    await sleep(3200);
    const cost = (next.structuredContent as { cost_micros: number }).cost_micros;
    const body = await (await gateway.request("/v1/account/balance", { key: user.key })).json();
    expect(body).toMatchObject({ balance_micros: 5_000_000 - cost, held_micros: 0 });
    await client.close();
  });

  it("parallel calls on one session obey concurrency and rpm; spend cap; revocation", async () => {
    const user = await createUser(gateway, {
      balanceMicros: 5_000_000,
      keyOptions: { concurrency: 2, rpm: 4 },
    });
    const client = await connectMcp(gateway, user.key);
    const results = await Promise.all(Array.from({ length: 6 }, () => client.callTool(chat(800))));
    expect(results.filter((r) => !r.isError)).toHaveLength(2);
    expect(results.filter((r) => /^429 concurrency_limited/.test(text(r)))).toHaveLength(4);
    const more = [];
    for (let i = 0; i < 3; i++) more.push(text(await client.callTool(chat(1))));
    expect(more.filter((t) => /^429 rate_limited/.test(t)).length).toBeGreaterThan(0);
    await client.close();

    const capped = await createUser(gateway, {
      balanceMicros: 5_000_000,
      keyOptions: { spend_limit_micros: 1 },
    });
    const c2 = await connectMcp(gateway, capped.key);
    expect(text(await c2.callTool(chat(1)))).toMatch(/^402 key_spend_limit_reached/);
    const revoked = await gateway.request(`/v1/admin/keys/${capped.keyId}/revoke`, {
      key: gateway.adminKey,
      method: "POST",
    });
    expect(revoked.status).toBe(200);
    await expect(c2.listTools()).rejects.toThrow(/Invalid API key/);
  });

  it("sizes and shapes: huge prompt, n, duration, types, 12 MiB, depth, batch, unknown method", async () => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const client = await connectMcp(gateway, user.key);
    const sid = sessionIdOf(client);
    const big = await client.callTool({
      name: "chat",
      arguments: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "word ".repeat(1_000_000) }],
      },
    });
    expect(text(big)).toMatch(/^400 context_length_exceeded/);
    const many = await client.callTool({
      name: "generate_image",
      arguments: { model: "imgmodel-2", prompt: "x", n: 1000 },
    });
    expect(text(many)).toMatch(/^400 invalid_parameter/);
    const long = await client.callTool({
      name: "generate_video",
      arguments: { model: "gen-video", prompt: "x", duration: 600 },
    });
    expect(text(long)).toMatch(/^400 invalid_parameter/);
    const typed = await client.callTool({ name: "chat", arguments: { model: 5, messages: "x" } });
    expect(text(typed)).toMatch(/^400 invalid_parameter/);
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "chat", arguments: { x: "x".repeat(12 * 1024 * 1024) } },
    });
    expect((await post(gateway, user.key, sid, huge)).status).toBe(413);
    const deep = `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":${"[".repeat(100)}${"]".repeat(100)}}`;
    expect((await post(gateway, user.key, sid, deep)).status).toBe(400);
    const batch = JSON.stringify([{ jsonrpc: "2.0", id: 9, method: "tools/list" }]);
    expect((await post(gateway, user.key, sid, batch)).status).toBe(400);
    const unknown = await post(
      gateway,
      user.key,
      sid,
      JSON.stringify({ jsonrpc: "2.0", id: 8, method: "no/such" }),
    );
    expect(await unknown.text()).toMatch(/-32601/);
    expect(
      (await gateway
        .request("/v1/account/balance", { key: user.key })
        .then((r) => r.json())) as object,
    ).toMatchObject({ balance_micros: 50_000_000, held_micros: 0 });
    await client.close();
  });

  it("key B cannot use, watch, cancel or end key A's session, nor read A's task or usage", async () => {
    const a = await createUser(gateway, { balanceMicros: 5_000_000 });
    const b = await createUser(gateway, { balanceMicros: 5_000_000 });
    const ca = await connectMcp(gateway, a.key);
    const sid = sessionIdOf(ca);
    const callA = ca.callTool(chat(1000));
    await sleep(200);
    const cancel = JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1 },
    });
    expect((await post(gateway, b.key, sid, cancel)).status).toBe(404);
    const headers = { authorization: `Bearer ${b.key}`, "mcp-session-id": sid };
    const get = await fetch(`${gateway.url}/mcp`, {
      headers: { ...headers, accept: "text/event-stream" },
    });
    expect(get.status).toBe(404);
    const del = await fetch(`${gateway.url}/mcp`, { method: "DELETE", headers });
    expect(del.status).toBe(404);
    expect((await callA).isError).toBeFalsy();
    const task = await ca.callTool({
      name: "generate_video",
      arguments: { model: "motion2.6-t2v", prompt: "[[sandbox:video-seconds=0.4]] x" },
    });
    const id = (task.structuredContent as { id: string }).id;
    const cb = await connectMcp(gateway, b.key);
    expect(text(await cb.callTool({ name: "get_video_task", arguments: { id } }))).toMatch(
      /^404 task_not_found/,
    );
    const usage = await cb.readResource({ uri: "switchyard://account/usage" });
    expect(JSON.parse((usage.contents[0] as { text: string }).text).data).toEqual([]);
    await ca.close();
    await cb.close();
  });
});
