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
