/**
 * @module test/support/mcp-client
 * An MCP SDK client connected to a test gateway's `/mcp` with a Bearer key.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function connectMcp(gateway: { url: string }, key: string): Promise<Client> {
  const client = new Client({ name: "switchyard-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** The session id the client's transport holds. */
export const sessionIdOf = (client: Client): string =>
  (client.transport as unknown as { sessionId: string }).sessionId;

/** A JSON-RPC message POSTed by hand on a session (to send what the SDK would not, or drop it). */
export function postOnSession(
  gateway: { url: string },
  key: string,
  sessionId: string,
  body: string,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    },
    body,
    ...(signal ? { signal } : {}),
  });
}
