/**
 * Hostile arguments to every MCP tool: whatever JSON an agent (or an attacker holding a key)
 * sends, a call ends as a result — a success or an `isError` result with a 4xx status from the
 * error catalogue — never a protocol failure, a 5xx or a charge for a refused call.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { connectMcp } from "./support/mcp-client.ts";

const MODELS = ["gpt-4o-mini", "imgmodel-2", "pictor-image-2.0", "tts3-flash", "gen-video", "nope"];

describe("MCP tools under hostile arguments", () => {
  let gateway: TestGateway;
  let client: Client;
  let accountId: string;
  let tools: string[];

  beforeAll(async () => {
    gateway = await startTestGateway();
    const user = await createUser(gateway, { balanceMicros: 1_000 });
    accountId = user.accountId;
    client = await connectMcp(gateway, user.key);
    tools = (await client.listTools()).tools.map((tool) => tool.name);
  });
  afterAll(async () => {
    await client?.close();
    await gateway?.close();
  });

  it("answers every call with a result whose errors are 4xx from the catalogue", async () => {
    const argument = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom(...MODELS),
      fc.string({ maxLength: 50 }),
      fc.integer(),
    );
    const args = fc.record(
      {
        model: fc.constantFrom(...MODELS),
        messages: fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          fc.constant([{ role: "user", content: "x" }]),
        ),
        prompt: argument,
        input: argument,
        images: argument,
        id: argument,
        request: argument,
        extra: argument,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...tools), args, async (tool, values) => {
        const result = await client.callTool({ name: tool, arguments: values });
        if (!result.isError) return;
        const [summary] = result.content as { text: string }[];
        expect(summary!.text).toMatch(/^4\d\d [a-z_A-Z.]+: /);
      }),
      { numRuns: 120, seed: 15 },
    );
    const report = await gateway.services.store.verify();
    expect(report.problems).toEqual([]);
    const balance = await gateway.services.store.findAccountById(accountId);
    expect(balance!.balanceMicros).toBeGreaterThanOrEqual(0);
  });
});
