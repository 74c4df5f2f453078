/**
 * An MCP `tools/call` in flight when the gateway closes its session: the key opens one more
 * session than `mcp.max_sessions_per_key` (which closes the least recently used), the account
 * one more than `mcp.max_sessions_per_account`, the idle sweep, or shutdown. JSON-RPC requires an
 * answer to every request, so before the transport is closed under the call, the request is
 * answered with an error for its id (`-32000`, "session closed: …") on its event stream; the
 * official SDK client's `callTool` rejects at once instead of waiting for its own timeout. The
 * aborted call is charged nothing and frees its concurrency slot.
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { connectMcp, postOnSession, sessionIdOf } from "./support/mcp-client.ts";

interface RpcMessage {
  id?: number;
  error?: { code: number; message: string };
}

const slowChat = (delayMs: number) => ({
  name: "chat",
  arguments: {
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: `[[sandbox:delay=${delayMs}]] hi` }],
  },
});

/** A `tools/call` POSTed by hand on a session; resolves to the JSON-RPC messages of its stream. */
function rawCall(gateway: TestGateway, key: string, sessionId: string, id: number) {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: slowChat(3000) });
  return postOnSession(gateway, key, sessionId, body)
    .then((response) => response.text())
    .then((text) =>
      text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => JSON.parse(line.slice(5)) as RpcMessage),
    );
}

const balance = async (gateway: TestGateway, key: string) =>
  (await (await gateway.request("/v1/account/balance", { key })).json()) as {
    balance_micros: number;
    held_micros: number;
  };

describe("MCP call in flight when its session is evicted", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { mcp: { max_sessions_per_key: 1 }, limits: { default_concurrency: 1 } },
    });
  });
  afterAll(() => gateway?.close());

  it("answers the in-flight request (an error for its id) rather than ending the stream silently", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const first = await connectMcp(gateway, user.key);
    const inFlight = rawCall(gateway, user.key, sessionIdOf(first), 7);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A second session of the same key closes the first (max_sessions_per_key: 1).
    const second = await connectMcp(gateway, user.key);
    try {
      const messages = await inFlight;
      const answer = messages.find((message) => message.id === 7);
      expect(answer?.error?.code).toBe(-32000);
      expect(answer?.error?.message).toMatch(/^session closed: /);
      // Charged nothing, the hold released, and the key's one concurrency slot free again.
      const deadline = Date.now() + 3000;
      let now = await balance(gateway, user.key);
      while (now.held_micros !== 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        now = await balance(gateway, user.key);
      }
      expect(now).toMatchObject({ balance_micros: 5_000_000, held_micros: 0 });
      const next = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      });
      expect(next.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("makes the SDK client's callTool reject at once, not at its own timeout", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const first = await connectMcp(gateway, user.key);
    const started = Date.now();
    const call = first.callTool(slowChat(5000)).then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await connectMcp(gateway, user.key);
    try {
      const error = await call;
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32000);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe("MCP call in flight at shutdown", () => {
  // Shutdown drains for `server.shutdown_grace_seconds` (1 s here); a call longer than that is
  // answered just before its connection is cut.
  it("is answered with an error for its id before the gateway closes", async () => {
    const gateway = await startTestGateway();
    let closed = false;
    try {
      const user = await createUser(gateway, { balanceMicros: 5_000_000 });
      const client = await connectMcp(gateway, user.key);
      const inFlight = rawCall(gateway, user.key, sessionIdOf(client), 9);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const closing = gateway.close();
      closed = true;
      const messages = await inFlight;
      await closing;
      const answer = messages.find((message) => message.id === 9);
      expect(answer?.error).toMatchObject({
        code: -32000,
        message: expect.stringMatching(/shutting down/),
      });
    } finally {
      if (!closed) await gateway.close();
    }
  });
});
