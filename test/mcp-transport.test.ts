/**
 * `/mcp` over raw HTTP: what the transport answers before any tool runs. No key or a wrong one is
 * 401 with `WWW-Authenticate: Bearer` and no session; a session belongs to its key; unknown or
 * ended sessions are 404 (so clients start over); batches, foreign origins and unsupported
 * protocol versions are refused; the protected-resource metadata says Bearer keys are used.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const ACCEPT = "application/json, text/event-stream";
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};

describe("MCP transport", () => {
  let gateway: TestGateway;
  let key: string;
  let otherKey: string;

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
    });

  /** Opens a session with `key`; returns its id. */
  async function open(withKey = key): Promise<string> {
    const response = await post(INITIALIZE, { authorization: `Bearer ${withKey}` });
    expect(response.status).toBe(200);
    await response.text();
    const id = response.headers.get("mcp-session-id");
    expect(id).toMatch(/^[\x21-\x7e]+$/);
    return id!;
  }

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        mcp: { allowed_origins: ["https://console.example.com"], max_sessions_per_key: 3 },
      },
    });
    key = (await createUser(gateway)).key;
    otherKey = (await createUser(gateway)).key;
  });
  afterAll(() => gateway?.close());

  it("no key or a wrong key: 401 with a Bearer challenge, a JSON-RPC error and no session", async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: "Bearer sk-wrong" },
      { authorization: "Basic abc" },
    ];
    for (const headers of cases) {
      const response = await post(INITIALIZE, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(response.headers.get("www-authenticate")).not.toMatch(/resource_metadata/);
      expect(response.headers.get("mcp-session-id")).toBeNull();
      const body = (await response.json()) as { jsonrpc: string; error: { code: number } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.code).toBe(-32000);
    }
    const get = await fetch(`${gateway.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(401);
    const remove = await fetch(`${gateway.url}/mcp`, { method: "DELETE" });
    expect(remove.status).toBe(401);
  });

  it("negotiates the protocol version and refuses an unsupported one", async () => {
    const response = await post(
      { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: "2025-06-18" } },
      { authorization: `Bearer ${key}` },
    );
    const text = await response.text();
    expect(text).toContain('"protocolVersion":"2025-06-18"');
    const session = response.headers.get("mcp-session-id")!;
    const bad = await post(
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      {
        authorization: `Bearer ${key}`,
        "mcp-session-id": session,
        "mcp-protocol-version": "1999-01-01",
      },
    );
    expect(bad.status).toBe(400);
  });

  it("a session answers only its own key; unknown and ended sessions are 404", async () => {
    const session = await open();
    const list = (withKey: string, id = session) =>
      post(
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        {
          authorization: `Bearer ${withKey}`,
          "mcp-session-id": id,
          "mcp-protocol-version": "2025-11-25",
        },
      );
    const own = await list(key);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('"name":"chat"');

    const foreign = await list(otherKey);
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { error: { code: number } }).error.code).toBe(-32001);
    expect((await list(key, "no-such-session")).status).toBe(404);

    const ended = await fetch(`${gateway.url}/mcp`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${key}`, "mcp-session-id": session },
    });
    expect(ended.status).toBe(200);
    expect((await list(key)).status).toBe(404);
  });

  it("a request without a session that is not initialize is a 400", async () => {
    const response = await post(
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { authorization: `Bearer ${key}` },
    );
    expect(response.status).toBe(400);
  });

  it("opens the server-to-client stream on GET", async () => {
    const session = await open();
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/mcp`, {
      headers: {
        authorization: `Bearer ${key}`,
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    controller.abort();
  });

  it("keeps at most max_sessions_per_key sessions per key, closing the oldest", async () => {
    const ids = [await open(), await open(), await open(), await open()];
    const status = async (id: string) =>
      (
        await post(
          { jsonrpc: "2.0", id: 3, method: "ping" },
          {
            authorization: `Bearer ${key}`,
            "mcp-session-id": id,
            "mcp-protocol-version": "2025-11-25",
          },
        )
      ).status;
    expect(await status(ids[0]!)).toBe(404);
    expect(await status(ids[3]!)).toBe(200);
  });

  it("refuses batches and origins that are not allowed", async () => {
    const batch = await post([INITIALIZE, { ...INITIALIZE, id: 2 }], {
      authorization: `Bearer ${key}`,
    });
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { error: { code: number } }).error.code).toBe(-32600);

    const foreign = await post(INITIALIZE, {
      authorization: `Bearer ${key}`,
      origin: "https://evil.example.com",
    });
    expect(foreign.status).toBe(403);
    const allowed = await post(INITIALIZE, {
      authorization: `Bearer ${key}`,
      origin: "https://console.example.com",
    });
    expect(allowed.status).toBe(200);
    await allowed.text();
  });

  it("serves protected-resource metadata naming Bearer keys and no authorization server", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const response = await fetch(`${gateway.url}${path}`);
      expect(response.status).toBe(200);
      const document = (await response.json()) as Record<string, unknown>;
      expect(document.resource).toBe(`${gateway.url}/mcp`);
      expect(document.bearer_methods_supported).toEqual(["header"]);
      expect(document.authorization_servers).toBeUndefined();
    }
    const other = await fetch(`${gateway.url}/.well-known/oauth-authorization-server`);
    expect(other.status).toBe(404);
    expect(other.headers.get("content-type")).toMatch(/json/);
  });
});
