/**
 * The shutdown does not wait for a vendor that never answers a video poll: stopping the video
 * engine aborts its poll in flight, so the process stops within server.shutdown_grace_seconds
 * however long upstream.first_byte_timeout_ms is. The aborted poll only moves the task's next
 * poll later (nothing finished, charged or recorded as a failure).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { xaiVideoModel } from "./support/vendor-models.ts";

describe("SIGTERM while a video poll hangs at the vendor", { timeout: 60_000 }, () => {
  let gateway: TestGateway | undefined;
  let vendor: Server | undefined;
  afterAll(async () => {
    vendor?.closeAllConnections();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  it("stops within server.shutdown_grace_seconds (1 s here) plus a margin", async () => {
    let polls = 0;
    vendor = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        if (request.method === "POST") {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ request_id: "req_1" }));
          return;
        }
        polls += 1; // never answered
      });
    });
    await new Promise<void>((resolve) => vendor!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        upstream: { first_byte_timeout_ms: 25_000 },
        tasks: { tick_ms: 50, poll_min_interval_ms: 50, poll_max_interval_ms: 500 },
        catalog: {
          models: [xaiVideoModel("slow-video", url, { perSecond: 50_000 })],
        },
      },
    });
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const response = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "slow-video", prompt: "a cat", duration: 2, resolution: "480p" },
    });
    expect(response.status).toBe(202);
    await expect.poll(() => polls, { timeout: 10_000 }).toBeGreaterThan(0);
    const started = performance.now();
    await gateway.close();
    const tookMs = performance.now() - started;
    expect(tookMs).toBeLessThan(5_000);
  });
});
