/**
 * Budgets end to end (docs/budgets.md): a key's spend cap refuses with 402
 * `key_spend_limit_reached` naming the cap, its period and its reset, and admits again in the
 * next period (the gateway's clock moved); a burst of concurrent requests never charges past
 * the cap and leaves the ledger sound; a minted key's cap is bounded by its parent's, whose cap
 * also counts the child's spend; an account's monthly budget alerts once per threshold, with a
 * signed webhook; a 429 names the limit and the key that refused.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "../src/tasks/webhooks/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  max_tokens: 400,
  messages: [{ role: "user", content }],
  ...extra,
});

const DAY = 86_400_000;
/** A Friday noon, UTC. */
const FRIDAY_NOON = Date.UTC(2026, 10, 27, 12, 0, 0);

async function receiver() {
  const deliveries: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      deliveries.push({ headers: request.headers, body });
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/budget`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("budgets", () => {
  let gateway: TestGateway;
  let time = FRIDAY_NOON;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { webhooks: { allow_loopback: true, retry_base_ms: 50, retry_max_ms: 200 } },
    });
    gateway.services.now = () => time;
  });
  afterAll(() => gateway.close());

  async function newKey(key: string, options: Record<string, unknown>) {
    const response = await gateway.request("/v1/account/keys", { key, json: options });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const send = (key: string, content = "budget") =>
    gateway.request("/v1/chat/completions", { key, json: chat(content) });

  const spentBy = async (accountId: string, keyId: string, since = 0) =>
    (await gateway.services.store.keySpend(accountId, keyId, since)).spentMicros;

  it("refuses a key past its daily cap with a 402 naming the cap and its reset, and admits it again the next day", async () => {
    time = FRIDAY_NOON;
    const quote = await gateway.request("/v1/billing/quote", {
      key: gateway.adminKey,
      json: chat("budget"),
    });
    const { max_cost_micros: hold } = (await quote.json()) as { max_cost_micros: number };
    const cap = hold * 3;
    const user = await createUser(gateway, {
      keyOptions: { spend_limit_micros: cap, spend_limit_period: "daily" },
    });
    const keys = await gateway.request("/v1/account/keys", { key: user.key });
    const { data } = (await keys.json()) as { data: Array<Record<string, unknown>> };
    expect(data[0]).toMatchObject({ spend_limit_micros: cap, spend_limit_period: "daily" });

    let refused: Response | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const response = await send(user.key);
      if (response.status === 402) refused = response;
      else expect(response.status).toBe(200);
    }
    expect(refused).toBeDefined();
    const body = (await refused!.json()) as { error: Record<string, unknown> };
    const dollars = `$${(cap / 1e6).toFixed(6).replace(/0{1,4}$/, "")}`;
    expect(body.error).toMatchObject({
      code: "key_spend_limit_reached",
      type: "spend_limit_reached",
    });
    expect(body.error.message).toContain(
      `This key's daily spend limit of ${dollars} is reached; it resets at 2026-11-28T00:00:00Z.`,
    );
    expect(refused!.headers.get("x-switchyard-spend-limit-period")).toBe("daily");
    expect(refused!.headers.get("x-switchyard-spend-limit-reset")).toBe("2026-11-28T00:00:00Z");
    const spentToday = await spentBy(user.accountId, user.keyId, FRIDAY_NOON - 12 * 3_600_000);
    expect(spentToday).toBeGreaterThan(0);
    expect(spentToday).toBeLessThanOrEqual(cap);

    // Midnight UTC: a new period, the same key is admitted again.
    time = Date.UTC(2026, 10, 28, 0, 0, 1);
    expect((await send(user.key)).status).toBe(200);
    time = FRIDAY_NOON;
  });

  it("never charges past the cap under a burst of concurrent requests, and the ledger stays sound", async () => {
    time = FRIDAY_NOON + 2 * DAY;
    const body = chat("[[sandbox:delay=500]] burst", { max_tokens: 60 });
    const quote = await gateway.request("/v1/billing/quote", { key: gateway.adminKey, json: body });
    const { max_cost_micros: hold } = (await quote.json()) as { max_cost_micros: number };
    const cap = hold * 5 + Math.floor(hold / 2);
    const user = await createUser(gateway, {
      keyOptions: { spend_limit_micros: cap, spend_limit_period: "weekly" },
    });
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        gateway.request("/v1/chat/completions", { key: user.key, json: body }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 402)).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(5);
    expect(statuses.filter((status) => status === 402).length).toBeGreaterThan(0);
    const charged = await Promise.all(
      responses
        .filter((response) => response.status === 200)
        .map(async (response) => Number(response.headers.get("x-switchyard-cost-micros"))),
    );
    const total = charged.reduce((sum, cost) => sum + cost, 0);
    expect(total).toBeLessThanOrEqual(cap);
    expect(await spentBy(user.accountId, user.keyId)).toBe(total);
    expect(await gateway.services.store.verify()).toMatchObject({ problems: [] });
    const account = await gateway.services.store.findAccountById(user.accountId);
    expect(account?.heldMicros).toBe(0);
  });

  it("bounds a minted key's cap by its parent's, and counts the child's spend against the parent's cap", async () => {
    time = FRIDAY_NOON + 10 * DAY;
    const quote = await gateway.request("/v1/billing/quote", {
      key: gateway.adminKey,
      json: chat("budget"),
    });
    const { max_cost_micros: hold } = (await quote.json()) as { max_cost_micros: number };
    const cap = hold * 2;
    const parent = await createUser(gateway, {
      keyOptions: { spend_limit_micros: cap, spend_limit_period: "monthly" },
    });
    const tooHigh = await newKey(parent.key, { spend_limit_micros: cap + 1 });
    expect(tooHigh.status).toBe(400);
    expect(tooHigh.body.error).toMatchObject({
      code: "invalid_parameter",
      param: "spend_limit_micros",
    });
    const inherited = await newKey(parent.key, { name: "a" });
    expect(inherited.status).toBe(201);
    expect(inherited.body).toMatchObject({
      spend_limit_micros: cap,
      spend_limit_period: "monthly",
      parent_key_id: parent.keyId,
    });
    const lower = await newKey(parent.key, { name: "b", spend_limit_micros: cap });
    expect(lower.body).toMatchObject({ spend_limit_micros: cap, spend_limit_period: "lifetime" });
    const periodOnly = await newKey(parent.key, { spend_limit_period: "daily" });
    expect(periodOnly.status).toBe(400);

    // Child a spends the parent's whole cap; child b is then refused by the parent's cap.
    const childA = String(inherited.body.key);
    const childB = String(lower.body.key);
    for (let i = 0; i < 200; i++) if ((await send(childA)).status === 402) break;
    const refused = await send(childB);
    expect(refused.status).toBe(402);
    const { error } = (await refused.json()) as { error: { message: string } };
    expect(error.message).toMatch(
      new RegExp(
        `^The monthly spend limit of its parent key ${parent.keyId} of \\$[\\d.]+ is reached; it resets at 2027-01-01T00:00:00Z\\.`,
      ),
    );
    expect(refused.headers.get("x-switchyard-spend-limit-key")).toBe(parent.keyId);
    expect(await spentBy(parent.accountId, parent.keyId)).toBeLessThanOrEqual(cap);
  });

  it("alerts once per threshold of an account's monthly budget, with a signed webhook", async () => {
    time = Date.UTC(2027, 0, 10, 12);
    const hooks = await receiver();
    try {
      const user = await createUser(gateway);
      const probe = await send(user.key);
      const cost = Number(probe.headers.get("x-switchyard-cost-micros"));
      expect(cost).toBeGreaterThan(0);
      // The month has spent `cost`; a budget of 4 × cost puts it at 25%.
      const set = await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { monthly_budget_micros: cost * 4, webhook_url: hooks.url },
      });
      expect(set.status).toBe(200);
      expect(await set.json()).toMatchObject({
        object: "budget",
        monthly_budget_micros: cost * 4,
        spent_micros: cost,
        alert_thresholds: [0.5, 0.8, 1],
        alerts_sent: [],
      });
      for (let i = 0; i < 6; i++) expect((await send(user.key)).status).toBe(200);
      await gateway.services.budgets?.idle();
      const deadline = Date.now() + 10_000;
      while (hooks.deliveries.length < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 25));
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Each alert is delivered on its own; they may arrive in any order.
      const events = hooks.deliveries
        .map((delivery) => JSON.parse(delivery.body))
        .sort((a, b) => a.data.threshold - b.data.threshold);
      expect(events.map((event) => event.data.threshold)).toEqual([0.5, 0.8, 1]);
      expect(events.every((event) => event.type === "budget.threshold_reached")).toBe(true);
      expect(events[0].data).toMatchObject({
        account_id: user.accountId,
        monthly_budget_micros: cost * 4,
        period_start: "2027-01-01T00:00:00.000Z",
      });
      const secret = await gateway.request("/v1/account/webhook-secret", { key: user.key });
      const { secret: signingSecret } = (await secret.json()) as { secret: string };
      for (const delivery of hooks.deliveries) {
        const header = String(delivery.headers["switchyard-signature"]);
        expect(verifyWebhookSignature(signingSecret, delivery.body, header)).toBe(true);
      }
      const read = await gateway.request("/v1/account/budget", { key: user.key });
      expect(await read.json()).toMatchObject({ alerts_sent: [0.5, 0.8, 1] });

      // More spend this month sends nothing more; a new month starts over (2 × cost: 50%).
      expect((await send(user.key)).status).toBe(200);
      time = Date.UTC(2027, 1, 1, 0, 0, 1);
      for (let i = 0; i < 2; i++) expect((await send(user.key)).status).toBe(200);
      await gateway.services.budgets?.idle();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const later = hooks.deliveries.slice(3).map((delivery) => JSON.parse(delivery.body));
      expect(later.map((event) => [event.data.threshold, event.data.period_start])).toEqual([
        [0.5, "2027-02-01T00:00:00.000Z"],
      ]);
    } finally {
      await hooks.close();
    }
  });

  it("says in a 429 which limit refused and whether the key's own or a key above it", async () => {
    const parent = await createUser(gateway, { keyOptions: { rpm: 1 } });
    expect((await send(parent.key)).status).toBe(200);
    const own = await send(parent.key);
    expect(own.status).toBe(429);
    expect(((await own.json()) as { message: string }).message).toMatch(
      /^Requests rate limit exceeded: this key allows 1 requests per minute; retry in \d+ s\.$/,
    );
    expect(own.headers.get("x-switchyard-limit")).toBe("rpm");
    expect(own.headers.get("x-switchyard-limit-scope")).toBe("key");

    const other = await createUser(gateway, { keyOptions: { concurrency: 1 } });
    const child = await newKey(other.key, { concurrency: 1 });
    const slow = gateway.request("/v1/chat/completions", {
      key: other.key,
      json: chat("[[sandbox:delay=800]] slow"),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const fromChild = await send(String(child.body.key));
    expect(fromChild.status).toBe(429);
    expect(((await fromChild.json()) as { message: string }).message).toBe(
      `Too many concurrent requests: its parent key ${other.keyId} allows 1 at a time; retry when one finishes.`,
    );
    expect(fromChild.headers.get("x-switchyard-limit")).toBe("concurrency");
    expect(fromChild.headers.get("x-switchyard-limit-scope")).toBe("ancestor_key");
    expect(fromChild.headers.get("x-switchyard-limit-key")).toBe(other.keyId);
    expect((await slow).status).toBe(200);
  });

  it("counts spend-limit refusals in switchyard_quota_rejections_total", async () => {
    const metrics = await gateway.request("/metrics", { key: gateway.adminKey });
    const text = await metrics.text();
    const line = text
      .split("\n")
      .find((entry) => entry.startsWith('switchyard_quota_rejections_total{kind="spend_limit"}'));
    expect(Number(line?.split(" ").pop())).toBeGreaterThanOrEqual(3);
  });
});
