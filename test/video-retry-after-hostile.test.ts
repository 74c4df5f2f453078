/**
 * A vendor that answers a task poll with `429` and an absurd `Retry-After`. A task is expired
 * when it is next claimed for a poll, so a next poll pushed out by the whole Retry-After
 * ("999999999": ~31 years) kept it `queued` with its hold taken, against docs/configuration.md
 * "A task not final after this long is `expired` and its hold released". The next poll is never
 * later than the task's expiry.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { xaiVideoModel } from "./support/vendor-models.ts";

describe("video task polled with a huge Retry-After", () => {
  let gateway: TestGateway;
  let vendor: Server;

  beforeAll(async () => {
    vendor = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        if (request.method === "POST") {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ request_id: "req_1" }));
          return;
        }
        response.writeHead(429, { "content-type": "application/json", "retry-after": "999999999" });
        response.end(JSON.stringify({ code: "rate_limited", error: "slow down" }));
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        tasks: {
          tick_ms: 50,
          poll_min_interval_ms: 50,
          poll_max_interval_ms: 500,
          max_age_seconds: 10,
        },
        catalog: {
          models: [xaiVideoModel("throttled-video", url, { perSecond: 50_000 })],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  it("expires the task and releases its hold after tasks.max_age_seconds", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "throttled-video", prompt: "a cat", duration: 2, resolution: "480p" },
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const deadline = Date.now() + 14_000;
    let task: { status: string; billing: { state: string } };
    for (;;) {
      task = (await (
        await gateway.request(`/v1/videos/generations/${id}`, { key: user.key })
      ).json()) as typeof task;
      if (task.billing.state === "released" || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const available = (await (
      await gateway.request("/v1/account/balance", { key: user.key })
    ).json()) as { balance_micros: number; held_micros: number };
    expect({
      status: task.status,
      billing: task.billing.state,
      held: available.held_micros,
      balance: available.balance_micros,
    }).toEqual({ status: "expired", billing: "released", held: 0, balance: before });
  }, 25_000);
});
