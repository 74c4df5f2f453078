/**
 * Webhooks of video tasks end to end: a receiver on loopback (allowed by configuration, as an
 * operator would for local development) gets the final task record signed with the account's
 * secret, verifiable with the recipe of docs/videos.md; a receiver that fails twice gets the
 * event on the third attempt, each attempt recorded on the task; a URL that resolves to a
 * private address is refused at submission, and nothing is held or sent.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const FAST = "[[sandbox:video-seconds=0.2]]";

interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A receiver that answers the statuses queued in `answers` (then 200) and records deliveries. */
async function receiver(answers: number[]) {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      deliveries.push({ headers: request.headers, body });
      response.statusCode = answers.shift() ?? 200;
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/video`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The verification recipe of docs/videos.md. */
function verify(secret: string, header: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2)));
  const expected = createHmac("sha256", secret).update(`${parts.t}.${body}`).digest("hex");
  return parts.v1 === expected;
}

async function waitFor<T>(read: () => Promise<T> | T, done: (value: T) => boolean) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("video task webhooks", () => {
  let gateway: TestGateway;
  let user: { key: string };

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 20, poll_min_interval_ms: 20 },
        webhooks: { allow_loopback: true, retry_base_ms: 50, retry_max_ms: 200 },
      },
    });
    user = await createUser(gateway, { balanceMicros: 10_000_000 });
  });
  afterAll(() => gateway.close());

  it("delivers the final record, signed, on the third attempt after two failures", async () => {
    const hook = await receiver([500, 503]);
    try {
      const secret = (
        (await (await gateway.request("/v1/account/webhook-secret", { key: user.key })).json()) as {
          secret: string;
        }
      ).secret;
      expect(secret).toMatch(/^whsec_/);
      const response = await gateway.request("/v1/videos/generations", {
        key: user.key,
        json: { model: "gen-video", prompt: `waves ${FAST}`, duration: 2, webhook_url: hook.url },
      });
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      await waitFor(
        () => hook.deliveries.length,
        (count) => count >= 3,
      );
      const last = hook.deliveries[2]!;
      const signature = String(last.headers["switchyard-signature"]);
      expect(verify(secret, signature, last.body)).toBe(true);
      expect(verify(secret, signature, `${last.body} `)).toBe(false);
      const event = JSON.parse(last.body) as { id: string; status: string; content: unknown };
      expect(event).toMatchObject({ id, status: "succeeded" });
      expect(event.content).toBeTruthy();
      // One event id for every attempt, so receivers can drop duplicates.
      expect(new Set(hook.deliveries.map((d) => d.headers["switchyard-event-id"])).size).toBe(1);

      const task = await waitFor(
        async () =>
          (await (
            await gateway.request(`/v1/videos/generations/${id}`, { key: user.key })
          ).json()) as {
            webhook: { state: string; attempts: { status?: number }[] };
          },
        (record) => record.webhook.state === "delivered",
      );
      expect(task.webhook.attempts.map((attempt) => attempt.status)).toEqual([500, 503, 200]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(hook.deliveries).toHaveLength(3);
    } finally {
      await hook.close();
    }
  });

  it("signs with the rotated secret from then on", async () => {
    const hook = await receiver([]);
    try {
      const rotated = (
        (await (
          await gateway.request("/v1/account/webhook-secret/rotate", {
            key: user.key,
            method: "POST",
          })
        ).json()) as { secret: string }
      ).secret;
      await gateway.request("/v1/videos/generations", {
        key: user.key,
        json: { model: "gen-video", prompt: `rotate ${FAST}`, duration: 1, webhook_url: hook.url },
      });
      const [delivery] = await waitFor(
        () => hook.deliveries,
        (list) => list.length >= 1,
      );
      expect(
        verify(rotated, String(delivery!.headers["switchyard-signature"]), delivery!.body),
      ).toBe(true);
    } finally {
      await hook.close();
    }
  });

  it.each([
    "http://10.0.0.7/hook",
    "http://192.168.1.20/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[fd00::1]/hook",
    "ftp://example.com/hook",
  ])("refuses %s at submission, holding and sending nothing", async (url) => {
    const before = (await (
      await gateway.request("/v1/account/balance", { key: user.key })
    ).json()) as {
      held_micros: number;
    };
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "gen-video", prompt: "x", duration: 1, webhook_url: url },
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/webhook_url/);
    const after = (await (
      await gateway.request("/v1/account/balance", { key: user.key })
    ).json()) as {
      held_micros: number;
    };
    expect(after.held_micros).toBe(before.held_micros);
  });
});
