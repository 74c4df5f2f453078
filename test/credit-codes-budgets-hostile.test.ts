/**
 * Credit codes, budgets and spend caps against a hostile client, through the public HTTP
 * surface: codes racing the maximum balance and their revocation, guessing limits across an
 * account's keys, a capped parent under a burst of its children, alerts under a burst of
 * charges; and query numbers written in ways a page size must not be read from.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const MAX_BALANCE = 100_000_000;

interface CodeObject {
  id: string;
  code?: string;
  prefix: string;
  amount_micros: number;
  status: string;
}

async function makeCodes(gateway: TestGateway, body: Record<string, unknown>) {
  const response = await gateway.request("/v1/admin/credit-codes", {
    key: gateway.adminKey,
    json: body,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { data: CodeObject[] }).data;
}

const redeem = (gateway: TestGateway, key: string, code: unknown) =>
  gateway.request("/v1/account/credit-codes/redeem", { key, json: { code } });

async function balanceOf(gateway: TestGateway, key: string) {
  const response = await gateway.request("/v1/account/balance", { key });
  return (await response.json()) as {
    balance_micros: number;
    held_micros: number;
    available_micros: number;
  };
}

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  max_tokens: 60,
  messages: [{ role: "user", content }],
  ...extra,
});

describe("credit codes, hostile", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        billing: { max_balance_micros: MAX_BALANCE },
        auth: { redeem_attempts_per_minute: null, redeem_attempts_per_account_per_minute: null },
      },
    });
  });
  afterAll(() => gateway.close());

  it("credits at most the maximum balance when many codes of one account race", async () => {
    const user = await createUser(gateway, { balanceMicros: MAX_BALANCE - 3_000_000 });
    const codes = await makeCodes(gateway, { amount_micros: 1_000_000, count: 8 });
    const responses = await Promise.all(codes.map((c) => redeem(gateway, user.key, c.code)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 400, 400, 400, 400, 400]);
    expect((await balanceOf(gateway, user.key)).balance_micros).toBe(MAX_BALANCE);
    const listed = (await (
      await gateway.request("/v1/admin/credit-codes?status=active&limit=100", {
        key: gateway.adminKey,
      })
    ).json()) as { data: CodeObject[] };
    expect(listed.data.filter((c) => codes.some((m) => m.id === c.id))).toHaveLength(5);
    expect((await gateway.services.store.verify()).problems).toEqual([]);
  });

  it("never both revokes and redeems a code when revocation and redemption race", async () => {
    for (let round = 0; round < 5; round++) {
      const user = await createUser(gateway, { balanceMicros: 0 });
      const [code] = await makeCodes(gateway, { amount_micros: 1_000_000 });
      const [redeemed, revoked] = await Promise.all([
        redeem(gateway, user.key, code!.code),
        gateway.request(`/v1/admin/credit-codes/${code!.id}/revoke`, {
          key: gateway.adminKey,
          method: "POST",
        }),
      ]);
      const balance = (await balanceOf(gateway, user.key)).balance_micros;
      expect([redeemed.status, revoked.status].sort()).toEqual(
        redeemed.status === 200 ? [200, 409] : [200, 400],
      );
      expect(balance).toBe(redeemed.status === 200 ? 1_000_000 : 0);
    }
  });
});

describe("credit code guessing limits", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        auth: { redeem_attempts_per_minute: 1000, redeem_attempts_per_account_per_minute: 3 },
      },
    });
  });
  afterAll(() => gateway.close());

  it("limits guesses per account across all of its keys and sessions", async () => {
    const user = await createUser(gateway, { balanceMicros: 0 });
    const extra = await gateway.request(`/v1/admin/accounts/${user.accountId}/keys`, {
      key: gateway.adminKey,
      json: { name: "second" },
    });
    const second = ((await extra.json()) as { key: string }).key;
    const minted = await gateway.request("/v1/account/keys", { key: user.key, json: {} });
    const third = ((await minted.json()) as { key: string }).key;
    const statuses: number[] = [];
    for (const key of [user.key, second, third, user.key, second, third]) {
      statuses.push((await redeem(gateway, key, "SWY-2222-2222-2222")).status);
    }
    expect(statuses).toEqual([400, 400, 400, 429, 429, 429]);
  });
});

describe("budgets and spend caps, hostile", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { webhooks: { allow_loopback: true, retry_base_ms: 50, retry_max_ms: 200 } },
    });
  });
  afterAll(() => gateway.close());

  it("keeps a capped parent's cap when its children burst concurrently", async () => {
    const body = chat("[[sandbox:delay=300]] burst");
    const quote = await gateway.request("/v1/billing/quote", { key: gateway.adminKey, json: body });
    const { max_cost_micros: hold } = (await quote.json()) as { max_cost_micros: number };
    const cap = hold * 4 + Math.floor(hold / 2);
    const parent = await createUser(gateway, {
      keyOptions: { spend_limit_micros: cap, spend_limit_period: "monthly" },
    });
    const children: string[] = [];
    for (let i = 0; i < 4; i++) {
      const made = await gateway.request("/v1/account/keys", { key: parent.key, json: {} });
      children.push(((await made.json()) as { key: string }).key);
    }
    const responses = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        gateway.request("/v1/chat/completions", { key: children[i % 4]!, json: body }),
      ),
    );
    let total = 0;
    for (const response of responses) {
      expect([200, 402]).toContain(response.status);
      if (response.status === 200)
        total += Number(response.headers.get("x-switchyard-cost-micros"));
      await response.arrayBuffer();
    }
    expect(total).toBeLessThanOrEqual(cap);
    const spent = await gateway.services.store.keySpend(parent.accountId, parent.keyId, 0);
    expect(spent.spentMicros).toBe(total);
    expect(spent.heldMicros).toBe(0);
  });
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

async function receiver(status = 200) {
  const deliveries: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      deliveries.push({ headers: request.headers, body });
      response.statusCode = status;
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("budgets: alerts, failures and period boundaries", () => {
  let gateway: TestGateway;
  let time = Date.UTC(2027, 2, 10, 12);

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        webhooks: { allow_loopback: true, retry_base_ms: 50, retry_max_ms: 100 },
        tasks: { tick_ms: 50 },
      },
    });
    gateway.services.now = () => time;
  });
  afterAll(() => gateway.close());

  const send = (key: string, content = "budget", extra: Record<string, unknown> = {}) =>
    gateway.request("/v1/chat/completions", { key, json: chat(content, extra) });

  it("alerts once per threshold when a burst of concurrent charges crosses them all", async () => {
    time = Date.UTC(2027, 3, 10, 12);
    const hooks = await receiver();
    try {
      const user = await createUser(gateway);
      const probe = await send(user.key);
      const cost = Number(probe.headers.get("x-switchyard-cost-micros"));
      const set = await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { monthly_budget_micros: cost * 4, webhook_url: hooks.url },
      });
      expect(set.status).toBe(200);
      const responses = await Promise.all(Array.from({ length: 12 }, () => send(user.key)));
      for (const response of responses) expect(response.status).toBe(200);
      // Setting the same budget again, and via the admin route, alerts nothing more.
      await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { monthly_budget_micros: cost * 4, webhook_url: hooks.url },
      });
      await gateway.request(`/v1/admin/accounts/${user.accountId}/budget`, {
        key: gateway.adminKey,
        method: "PATCH",
        json: { monthly_budget_micros: cost * 4 },
      });
      await gateway.services.budgets?.idle();
      await sleep(400);
      const thresholds = hooks.deliveries
        .map((delivery) => JSON.parse(delivery.body).data.threshold)
        .sort();
      expect(thresholds).toEqual([0.5, 0.8, 1]);
      const read = await gateway.request("/v1/account/budget", { key: user.key });
      expect(await read.json()).toMatchObject({
        alerts_sent: [0.5, 0.8, 1],
        spent_micros: cost * 13,
      });
    } finally {
      await hooks.close();
    }
  });
});

describe("admin routes, hostile parameters", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("refuses a non-integer or non-decimal `limit` instead of reading another page size from it", async () => {
    // TypeBox's conversion alone read `1.5` and `1e2` as 1 and `0x10` as 16.
    for (const path of ["/v1/admin/credit-codes", "/v1/admin/accounts", "/v1/account/ledger"])
      for (const limit of ["1.5", "1e2", "0x10", "", " 5", "Infinity"]) {
        const response = await gateway.request(`${path}?limit=${encodeURIComponent(limit)}`, {
          key: gateway.adminKey,
        });
        expect(response.status, `${path}?limit=${limit}`).toBe(400);
        const body = (await response.json()) as { error: { param?: string } };
        expect(body.error.param, `${path}?limit=${limit}`).toBe("limit");
      }
    const fine = await gateway.request("/v1/admin/credit-codes?limit=5", { key: gateway.adminKey });
    expect(fine.status).toBe(200);
  });
});
