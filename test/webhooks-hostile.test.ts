/**
 * Signed webhooks and budget alerts against slow, hanging and disowned receivers (docs/videos.md
 * "Webhooks", docs/budgets.md "Account monthly budgets"). Each test asserts the documented (or,
 * where the docs are silent, the safe) behaviour and failed before its fix.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const FAST = "[[sandbox:video-seconds=0.2]]";

interface Delivery {
  at: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A loopback receiver answering `status` (or the queued statuses, then 200). */
async function receiver(answer: number | number[] = 200) {
  const deliveries: Delivery[] = [];
  const queue = Array.isArray(answer) ? [...answer] : undefined;
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      deliveries.push({ at: Date.now(), headers: request.headers, body });
      response.statusCode = queue ? (queue.shift() ?? 200) : (answer as number);
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitFor<T>(read: () => Promise<T> | T, done: (value: T) => boolean, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("budget alerts for video task charges", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20 },
        webhooks: { allow_loopback: true, retry_base_ms: 50, retry_max_ms: 200 },
      },
    });
  });
  afterAll(() => gateway.close());

  it("alerts the account's monthly budget when a video task's charge crosses its thresholds", async () => {
    const hook = await receiver();
    try {
      const user = await createUser(gateway, { balanceMicros: 50_000_000 });
      // A budget of 1 micro-USD: any charge at all reaches every threshold.
      const set = await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { monthly_budget_micros: 1, webhook_url: hook.url },
      });
      expect(set.status).toBe(200);
      expect(await set.json()).toMatchObject({ spent_micros: 0, alerts_sent: [] });

      const submitted = await gateway.request("/v1/videos/generations", {
        key: user.key,
        json: { model: "gen-video", prompt: `budget ${FAST}`, duration: 1 },
      });
      expect(submitted.status).toBe(202);
      const { id } = (await submitted.json()) as { id: string };
      await waitFor(
        async () =>
          (await (
            await gateway.request(`/v1/videos/generations/${id}`, { key: user.key })
          ).json()) as { status: string; billing: { state: string; cost_micros: number } },
        (task) => task.billing.state === "settled",
      );
      await gateway.services.budgets?.idle();
      await sleep(300);
      await gateway.services.budgets?.idle();

      const budget = (await (
        await gateway.request("/v1/account/budget", { key: user.key })
      ).json()) as { spent_micros: number; alerts_sent: number[] };
      // The video's charge is in the month's spend …
      expect(budget.spent_micros).toBeGreaterThan(1);
      // … so "after every charge" the thresholds it crossed alert (docs/budgets.md).
      expect(budget.alerts_sent).toEqual([0.5, 0.8, 1]);
      expect(hook.deliveries.length).toBe(3);
    } finally {
      await hook.close();
    }
  });
});

describe("what a delivery records and where it goes", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20 },
        webhooks: { allow_loopback: true, retry_base_ms: 100, retry_max_ms: 200 },
      },
    });
  });
  afterAll(() => gateway.close());

  it("records when each video webhook attempt started, not when it ended", async () => {
    const arrivals: Array<{ at: number; signature: string }> = [];
    const server: Server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        arrivals.push({
          at: Date.now(),
          signature: String(request.headers["switchyard-signature"]),
        });
        // A slow but successful receiver (docs allow up to 10 s).
        setTimeout(() => response.end("ok"), 3000);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const user = await createUser(gateway, { balanceMicros: 50_000_000 });
      const submitted = await gateway.request("/v1/videos/generations", {
        key: user.key,
        json: {
          model: "gen-video",
          prompt: `slow ${FAST}`,
          duration: 1,
          webhook_url: `http://127.0.0.1:${port}/slow`,
        },
      });
      const { id } = (await submitted.json()) as { id: string };
      const task = await waitFor(
        async () =>
          (await (
            await gateway.request(`/v1/videos/generations/${id}`, { key: user.key })
          ).json()) as { webhook: { state: string; attempts: Array<{ at: number }> } },
        (record) => record.webhook.state === "delivered",
      );
      const signedAt = Number(/t=(\d+)/.exec(arrivals[0]!.signature)![1]);
      // docs/videos.md: "Every attempt is recorded on the task record: when it started, …".
      expect(task.webhook.attempts[0]!.at).toBe(signedAt);
      expect(task.webhook.attempts[0]!.at).toBeLessThanOrEqual(Math.floor(arrivals[0]!.at / 1000));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("stops sending budget alerts to a webhook_url the account has removed", async () => {
    const hook = await receiver(500);
    try {
      const user = await createUser(gateway, { balanceMicros: 50_000_000 });
      await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { monthly_budget_micros: 1, webhook_url: hook.url },
      });
      const chat = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: { model: "gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "hi" }] },
      });
      expect(chat.status).toBe(200);
      await waitFor(
        () => hook.deliveries.length,
        (count) => count >= 3,
      );
      // The account takes its webhook away (say the host is no longer theirs).
      const removed = await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { webhook_url: null },
      });
      expect(removed.status).toBe(200);
      expect(await removed.json()).toMatchObject({ webhook_url: null });
      const afterRemoval = hook.deliveries.length;
      await sleep(1500);
      expect(hook.deliveries.length - afterRemoval).toBe(0);
    } finally {
      await hook.close();
    }
  });
});

describe("the give-up window", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20 },
        // Retries after 1.35–1.5 s; "no attempt is made later than 1 s after the first".
        webhooks: {
          allow_loopback: true,
          retry_base_ms: 1500,
          retry_max_ms: 1500,
          give_up_after_seconds: 1,
        },
      },
    });
  });
  afterAll(() => gateway.close());

  it("starts no video webhook attempt later than give_up_after_seconds after the first", async () => {
    const hook = await receiver(500);
    try {
      const user = await createUser(gateway, { balanceMicros: 50_000_000 });
      const submitted = await gateway.request("/v1/videos/generations", {
        key: user.key,
        json: { model: "gen-video", prompt: `window ${FAST}`, duration: 1, webhook_url: hook.url },
      });
      expect(submitted.status).toBe(202);
      await waitFor(
        () => hook.deliveries.length,
        (count) => count >= 1,
      );
      await sleep(2500);
      const first = hook.deliveries[0]!.at;
      const late = hook.deliveries.filter((delivery) => delivery.at - first > 1000);
      // docs/videos.md: "No attempt starts more than 24 hours [give_up_after_seconds] after the first".
      expect(late.map((delivery) => delivery.at - first)).toEqual([]);
    } finally {
      await hook.close();
    }
  });

  it("starts no budget webhook attempt later than give_up_after_seconds after the first", async () => {
    const hook = await receiver(500);
    try {
      const user = await createUser(gateway, { balanceMicros: 50_000_000 });
      await gateway.request("/v1/account/budget", {
        key: user.key,
        method: "PATCH",
        json: { monthly_budget_micros: 1, webhook_url: hook.url },
      });
      const chat = await gateway.request("/v1/chat/completions", {
        key: user.key,
        json: { model: "gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "hi" }] },
      });
      expect(chat.status).toBe(200);
      await waitFor(
        () => hook.deliveries.length,
        (count) => count >= 3,
      );
      await sleep(2500);
      const firstByEvent = new Map<string, number>();
      const late: number[] = [];
      for (const delivery of hook.deliveries) {
        const event = String(delivery.headers["switchyard-event-id"]);
        const first = firstByEvent.get(event) ?? delivery.at;
        firstByEvent.set(event, first);
        if (delivery.at - first > 1000) late.push(delivery.at - first);
      }
      // docs/budgets.md: a delivery still failing give_up_after_seconds after its first attempt is given up.
      expect(late).toEqual([]);
    } finally {
      await hook.close();
    }
  });
});

describe("a receiver that never answers", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20 },
        webhooks: { allow_loopback: true, timeout_ms: 5000 },
      },
    });
  });
  afterAll(() => gateway.close());

  it("does not hold up other accounts' video tasks while a webhook attempt hangs", async () => {
    const seen: number[] = [];
    const server: Server = createServer(() => {
      seen.push(Date.now()); // never answers
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const attacker = await createUser(gateway, { balanceMicros: 50_000_000 });
      const victim = await createUser(gateway, { balanceMicros: 50_000_000 });
      const run = async (key: string, extra: Record<string, unknown> = {}) => {
        const submitted = await gateway.request("/v1/videos/generations", {
          key,
          json: { model: "gen-video", prompt: `hang ${FAST}`, duration: 1, ...extra },
        });
        expect(submitted.status).toBe(202);
        const { id } = (await submitted.json()) as { id: string };
        return id;
      };
      const finalIn = async (key: string, id: string) => {
        const started = Date.now();
        await waitFor(
          async () =>
            (await (await gateway.request(`/v1/videos/generations/${id}`, { key })).json()) as {
              status: string;
            },
          (task) => task.status === "succeeded",
        );
        return Date.now() - started;
      };
      // Baseline: the victim's task alone.
      const alone = await finalIn(victim.key, await run(victim.key));
      await run(attacker.key, { webhook_url: `http://127.0.0.1:${port}/slow` });
      await waitFor(
        () => seen.length,
        (count) => count >= 1,
      );
      const beside = await finalIn(victim.key, await run(victim.key));
      // One tenant's hanging receiver must not add its whole timeout to everyone's tasks.
      expect({ alone, beside: beside < alone + 2000 ? "fine" : beside }).toEqual({
        alone,
        beside: "fine",
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
