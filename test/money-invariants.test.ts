/**
 * Charge ≤ hold and balance ≥ 0 on every path: explicit output caps that the hold covers (and
 * that are lowered to fit the balance), charges capped at the hold when a vendor overruns, and
 * every delivered unit billed when a stream is aborted or broken.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { waitFor } from "./support/sandbox-stats.ts";

interface UsageRow {
  request_id: string;
  status: string;
  output_tokens: number;
  cost_micros: number;
  held_micros: number;
  overrun_micros: number;
  output_cap_lowered_to: number | null;
  breakdown: Record<string, number>;
}

interface LoggedRequest {
  path: string;
  body: { max_tokens?: number; messages?: Array<{ content?: unknown }> } | null;
}

/** A vendor that ignores `max_tokens` and reports a million output tokens. */
function startRogueVendor(): Promise<Server> {
  const server = createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => {
      raw += chunk.toString();
    });
    request.on("end", () => {
      const body = JSON.parse(raw) as { stream?: boolean; model: string };
      const usage = { prompt_tokens: 10, completion_tokens: 1_000_000, total_tokens: 1_000_010 };
      const base = { id: "chatcmpl-rogue", created: 1, model: body.model };
      if (body.stream) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        response.write(chunk({ role: "assistant", content: "" }, null));
        response.write(chunk({ content: "far more than you asked for" }, null));
        response.write(chunk({}, "length"));
        response.write(
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [], usage })}\n\n`,
        );
        response.end("data: [DONE]\n\n");
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          ...base,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "far more than you asked for" },
              finish_reason: "length",
            },
          ],
          usage,
        }),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("money invariants through the pipeline", () => {
  let gateway: TestGateway;
  let rogue: Server;

  beforeAll(async () => {
    rogue = await startRogueVendor();
    const { port } = rogue.address() as AddressInfo;
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [
            {
              id: "rogue-chat",
              endpoint: "chat",
              family: "test",
              display_name: "A vendor that overruns",
              owned_by: "switchyard",
              capabilities: { max_output_tokens: 1_000 },
              pricing: { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } },
              routes: [
                {
                  vendor: "rogue",
                  adapter: "openai-compatible",
                  base_url: `http://127.0.0.1:${port}/v1`,
                  upstream_model: "rogue-1",
                },
              ],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => rogue.close(resolve));
  });

  async function usageOf(key: string, requestId: string): Promise<UsageRow | undefined> {
    const response = await gateway.request("/v1/account/usage?limit=1000", { key });
    const { data } = (await response.json()) as { data: UsageRow[] };
    return data.find((row) => row.request_id === requestId);
  }
  async function balance(key: string) {
    const response = await gateway.request("/v1/account/balance", { key });
    return (await response.json()) as { balance_micros: number; held_micros: number };
  }
  async function sandboxRequests(marker: string): Promise<LoggedRequest[]> {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
    const { requests } = (await response.json()) as { requests: LoggedRequest[] };
    return requests.filter((request) => JSON.stringify(request.body ?? {}).includes(marker));
  }
  const millionWords = (marker: string, extra: Record<string, unknown> = {}) => ({
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "[[sandbox:words=1000000]]" },
      { role: "user", content: `write forever ${marker}` },
    ],
    ...extra,
  });

  it("sends an output cap the hold covers, so a million-word reply cannot overdraw", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: millionWords("cap-a"),
    });
    expect(response.status).toBe(200);
    const [sent] = await sandboxRequests("cap-a");
    expect(sent?.body?.max_tokens).toBeGreaterThan(0);
    expect(sent?.body?.max_tokens).toBeLessThanOrEqual(16_384);
    const record = await usageOf(user.key, response.headers.get("x-request-id") ?? "");
    expect(record?.cost_micros).toBeLessThanOrEqual(record?.held_micros ?? -1);
    const after = await balance(user.key);
    expect(after.balance_micros).toBeGreaterThanOrEqual(0);
    expect(after.held_micros).toBe(0);
  });

  it("keeps the balance at or above zero under 50 concurrent million-word requests", async () => {
    const user = await createUser(gateway, { balanceMicros: 100_000 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        gateway.request("/v1/chat/completions", {
          key: user.key,
          json: millionWords(`flood-${i}`, { stream: i % 2 === 0 }),
        }),
      ),
    );
    for (const answer of answers) {
      expect([200, 402]).toContain(answer.status);
      await answer.text();
    }
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThan(0);
    const after = await waitFor(
      () => balance(user.key),
      (value) => value.held_micros === 0,
    );
    expect(after.held_micros).toBe(0);
    expect(after.balance_micros).toBeGreaterThanOrEqual(0);
  });

  it("lowers the output cap to what the balance covers, and says so", async () => {
    const user = await createUser(gateway, { balanceMicros: 3_000 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: millionWords("lowered"),
    });
    expect(response.status).toBe(200);
    const lowered = Number(response.headers.get("x-switchyard-output-cap-lowered"));
    expect(lowered).toBeGreaterThan(1_000);
    expect(lowered).toBeLessThan(16_384);
    const [sent] = await sandboxRequests("lowered");
    expect(sent?.body?.max_tokens).toBe(lowered);
    const record = await usageOf(user.key, response.headers.get("x-request-id") ?? "");
    expect(record?.output_cap_lowered_to).toBe(lowered);
    expect(record?.held_micros).toBeLessThanOrEqual(3_000);
    expect((await balance(user.key)).balance_micros).toBeGreaterThanOrEqual(0);
  });

  it("answers 402 when not even the minimum output fits, and sends nothing upstream", async () => {
    const user = await createUser(gateway, { balanceMicros: 5 });
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      json: millionWords("too-poor"),
    });
    expect(response.status).toBe(402);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /Insufficient balance/,
    );
    expect(await sandboxRequests("too-poor")).toHaveLength(0);
  });

  it("charges a vendor's overrun at the hold and records the overrun", async () => {
    const user = await createUser(gateway, { balanceMicros: 1_000_000 });
    for (const stream of [false, true]) {
      const response = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: { model: "rogue-chat", stream, messages: [{ role: "user", content: "hi" }] },
      });
      expect(response.status).toBe(200);
      await response.text();
      const record = await waitFor(
        () => usageOf(user.key, response.headers.get("x-request-id") ?? ""),
        (row) => row !== undefined,
      );
      expect(record?.cost_micros).toBe(record?.held_micros);
      // A million tokens at 2 µUSD each, minus the hold: not charged, but recorded.
      expect(record?.overrun_micros).toBeGreaterThan(1_900_000);
      const items = Object.values(record?.breakdown ?? {});
      expect(items.reduce((sum, value) => sum + value, 0)).toBe(record?.cost_micros);
    }
    const after = await balance(user.key);
    expect(after.held_micros).toBe(0);
    expect(after.balance_micros).toBeGreaterThan(990_000);
  });

  it("bills an aborted native /v1/messages stream for what was delivered, not one token", async () => {
    const user = await createUser(gateway, { balanceMicros: 5_000_000 });
    const client = new Anthropic({ baseURL: gateway.url, apiKey: user.key, maxRetries: 0 });
    const stream = client.messages.stream({
      model: "claude-haiku-4-5",
      max_tokens: 4_000,
      messages: [{ role: "user", content: "[[sandbox:words=1000;chunk-delay=5]] talk" }],
    });
    let requestId = "";
    let text = "";
    stream.on("text", (delta) => {
      text += delta;
      if (text.split(" ").length > 600) stream.abort();
    });
    const response = await stream.withResponse().catch(() => undefined);
    requestId = response?.response.headers.get("x-request-id") ?? "";
    await stream.done().catch(() => {});
    expect(requestId).not.toBe("");
    const record = await waitFor(
      () => usageOf(user.key, requestId),
      (row) => row !== undefined,
    );
    expect(record?.status).toBe("aborted");
    expect(record?.output_tokens).toBeGreaterThan(500);
    expect(record?.output_tokens).toBeLessThan(1_400);
  });
});
