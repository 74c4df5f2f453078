/**
 * One key, one ledger: the same chat request through `POST /v1/chat/completions` and through the
 * MCP `chat` tool costs the same, leaves the same ledger entries and the same usage record
 * fields; a key without balance gets the HTTP API's 402 as a tool error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { connectMcp } from "./support/mcp-client.ts";

const REQUEST = {
  model: "gpt-4o-mini",
  messages: [
    { role: "system" as const, content: "You are terse." },
    { role: "user" as const, content: "Name three rivers. [[sandbox:words=40]]" },
  ],
  max_tokens: 200,
};

/** The fields of a record that describe the charge, not the request's identity or timing. */
function chargeFields(record: Record<string, unknown>) {
  const {
    id: _id,
    account_id: _account,
    accountId: _accountId,
    request_id: _request,
    requestId: _requestId,
    key_id: _key,
    keyId: _keyId,
    latency_ms: _latency,
    ttfb_ms: _ttfb,
    created_at: _created,
    createdAt: _createdAt,
    upstream_request_id: _upstream,
    ...rest
  } = record;
  return rest;
}

describe("MCP and HTTP share one ledger", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  const usage = async (key: string) =>
    (
      (await (await gateway.request("/v1/account/usage", { key })).json()) as {
        data: Record<string, unknown>[];
      }
    ).data;
  const ledger = async (accountId: string) =>
    (await gateway.services.store.listEntries(accountId, { limit: 20 })).map((entry) =>
      chargeFields({ ...entry }),
    );

  it("the same chat request costs the same and is recorded the same way", async () => {
    const viaHttp = await createUser(gateway, { balanceMicros: 5_000_000 });
    const viaMcp = await createUser(gateway, { balanceMicros: 5_000_000 });

    const response = await gateway.request("/v1/chat/completions", {
      key: viaHttp.key,
      json: { ...REQUEST, stream: false },
    });
    expect(response.status).toBe(200);
    const httpCost = Number(response.headers.get("x-switchyard-cost-micros"));
    const httpBody = (await response.json()) as { choices: { message: { content: string } }[] };

    const client = await connectMcp(gateway, viaMcp.key);
    try {
      const result = await client.callTool({ name: "chat", arguments: REQUEST });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as { cost_micros: number; content: string };
      expect(httpCost).toBeGreaterThan(0);
      expect(structured.cost_micros).toBe(httpCost);
      expect(structured.content).toBe(httpBody.choices[0]!.message.content);
    } finally {
      await client.close();
    }

    const [httpRecord] = await usage(viaHttp.key);
    const [mcpRecord] = await usage(viaMcp.key);
    expect(Object.keys(mcpRecord!).sort()).toEqual(Object.keys(httpRecord!).sort());
    expect(chargeFields(mcpRecord!)).toEqual(chargeFields(httpRecord!));
    expect(mcpRecord!.endpoint).toBe("/v1/chat/completions");

    const httpLedger = await ledger(viaHttp.accountId);
    const mcpLedger = await ledger(viaMcp.accountId);
    expect(mcpLedger.length).toBeGreaterThan(1);
    expect(mcpLedger).toEqual(httpLedger);
  });

  it("a key without balance gets the HTTP API's 402 as a tool error, and is charged nothing", async () => {
    const broke = await createUser(gateway, { balanceMicros: 0 });
    const http = await gateway.request("/v1/chat/completions", { key: broke.key, json: REQUEST });
    expect(http.status).toBe(402);
    const { error } = (await http.json()) as { error: { message: string } };

    const client = await connectMcp(gateway, broke.key);
    try {
      const result = await client.callTool({ name: "chat", arguments: REQUEST });
      expect(result.isError).toBe(true);
      const [summary, detail] = result.content as { text: string }[];
      expect(summary!.text).toBe(`402 insufficient_balance: ${error.message}`);
      expect(JSON.parse(detail!.text).error).toMatchObject({
        status: 402,
        code: "insufficient_balance",
        message: error.message,
      });
    } finally {
      await client.close();
    }
    expect(await usage(broke.key)).toEqual([]);
    const entries = await gateway.services.store.listEntries(broke.accountId, { limit: 20 });
    expect(entries.filter((entry) => entry.kind === "charge")).toEqual([]);
  });
});
