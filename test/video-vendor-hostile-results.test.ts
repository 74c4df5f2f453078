/**
 * The xAI video adapter and the task engine against a misbehaving vendor, through the public
 * HTTP API: a `done` whose result is not an http(s) link is a failed task (released, not
 * charged); a task id of `..` is never polled at another address of the vendor's API; and a
 * poll answer that never ends (a byte every 200 ms, below any idle timeout) neither stops the
 * engine from settling other vendors' tasks nor keeps its own task from expiring and being
 * refunded: a poll ends within three leases, and never past the task's age limit.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { xaiVideoModel } from "./support/vendor-models.ts";

const PER_SECOND = 50_000;

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

async function startVendor(handler: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => handler(request, response, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stopVendor(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

interface TaskRecord {
  id: string;
  status: string;
  content: { video_url: string } | null;
  error: { code: string; message: string } | null;
  billing: { state: string; held_micros: number; cost_micros: number };
}

async function readTask(gateway: TestGateway, key: string, id: string): Promise<TaskRecord> {
  return (await (
    await gateway.request(`/v1/videos/generations/${id}`, { key })
  ).json()) as TaskRecord;
}

/** Polls the task record until its billing is settled or released, or the deadline passes. */
async function settledTask(
  gateway: TestGateway,
  key: string,
  id: string,
  withinMs: number,
): Promise<TaskRecord> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const task = await readTask(gateway, key, id);
    if (task.billing.state === "settled" || task.billing.state === "released") return task;
    if (Date.now() > deadline) return task;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("xAI video: what a 'done' task's video.url may be", () => {
  let gateway: TestGateway;
  let vendor: Server;
  /** What GET /videos/{id} answers `done` with, by request id. */
  const videoUrls = new Map<string, string>();
  /** The paths of the task polls the vendor received. */
  const pollPaths: string[] = [];

  beforeAll(async () => {
    const started = await startVendor((request, response, body) => {
      if (request.method === "POST") {
        const prompt = (JSON.parse(body) as { prompt: string }).prompt;
        json(response, 200, { request_id: prompt });
        return;
      }
      pollPaths.push(request.url ?? "");
      const id = decodeURIComponent((request.url ?? "").split("/").pop() ?? "");
      json(response, 200, {
        status: "done",
        progress: 100,
        model: "g",
        video: { url: videoUrls.get(id), duration: 2, respect_moderation: true },
        usage: { cost_in_usd_ticks: 1 },
      });
    });
    vendor = started.server;
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 50, poll_min_interval_ms: 50, poll_max_interval_ms: 200 },
        catalog: {
          models: [xaiVideoModel("xai-url-video", started.url, { perSecond: PER_SECOND })],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await stopVendor(vendor);
  });

  async function runTask(requestId: string, videoUrl: string) {
    videoUrls.set(requestId, videoUrl);
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const submitted = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "xai-url-video", prompt: requestId, duration: 2, resolution: "480p" },
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    const task = await settledTask(gateway, user.key, id, 8_000);
    return { task, charged: before - (await balanceOf(gateway, user.key)) };
  }

  it.each([
    ["not-a-link", "Internal error: storage unavailable"],
    ["file-link", "file:///etc/passwd"],
    ["script-link", "javascript:alert(document.cookie)"],
  ])(
    "a 'done' whose video.url is not an http(s) link (%s) is not a succeeded task charged for a video it cannot download",
    async (requestId, videoUrl) => {
      const { task, charged } = await runTask(requestId, videoUrl);
      expect({
        status: task.status,
        deliveredUrl: task.content?.video_url ?? null,
        billing: task.billing.state,
        charged,
      }).toEqual({ status: "failed", deliveredUrl: null, billing: "released", charged: 0 });
    },
    15_000,
  );

  it("a request_id of '..' is not polled at another path of the vendor's API (GET {base}/ with the key)", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const submitted = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "xai-url-video", prompt: "..", duration: 2, resolution: "480p" },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect({
      submitStatus: submitted.status === 202 || submitted.status === 502,
      pollsOutsideVideos: pollPaths.filter((path) => !path.startsWith("/videos/")),
    }).toEqual({ submitStatus: true, pollsOutsideVideos: [] });
  }, 10_000);
});

describe("xAI video: a poll answer that never ends", () => {
  let gateway: TestGateway;
  let stalling: Server;
  let healthy: Server;
  let stallingPolls = 0;
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    const slow = await startVendor((request, response, body) => {
      if (request.method === "POST") {
        json(response, 200, { request_id: (JSON.parse(body) as { prompt: string }).prompt });
        return;
      }
      stallingPolls++;
      // 200 with a JSON body that never ends: a whitespace byte every 200 ms keeps any idle
      // timeout from firing, and would still parse as JSON if it ever ended.
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"status":"pending","progress":10');
      const timer = setInterval(() => response.write(" "), 200);
      timers.add(timer);
      response.on("close", () => clearInterval(timer));
    });
    stalling = slow.server;
    const ok = await startVendor((request, response) => {
      if (request.method === "POST") {
        json(response, 200, { request_id: "ok-1" });
        return;
      }
      json(response, 200, {
        status: "done",
        progress: 100,
        video: { url: "https://vidgen.x.ai/ok-1.mp4", duration: 2, respect_moderation: true },
      });
    });
    healthy = ok.server;
    gateway = await startTestGateway({
      config: {
        upstream: { first_byte_timeout_ms: 1000, idle_timeout_ms: 1000 },
        tasks: {
          tick_ms: 50,
          poll_min_interval_ms: 50,
          poll_max_interval_ms: 200,
          lease_seconds: 1,
          max_age_seconds: 10,
        },
        catalog: {
          models: [
            xaiVideoModel("stalling-video", slow.url, { perSecond: PER_SECOND }),
            xaiVideoModel("healthy-video", ok.url, { perSecond: PER_SECOND }),
          ],
        },
      },
    });
  });
  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    await gateway?.close();
    await stopVendor(stalling);
    await stopVendor(healthy);
  });

  it("one vendor's endless poll answer does not stop another vendor's finished task from being settled", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const first = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "stalling-video", prompt: "a cat", duration: 2, resolution: "480p" },
    });
    expect(first.status).toBe(202);
    const until = Date.now() + 5_000;
    while (stallingPolls === 0 && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stallingPolls).toBeGreaterThan(0);

    const second = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "healthy-video", prompt: "a dog", duration: 2, resolution: "480p" },
    });
    expect(second.status).toBe(202);
    const { id } = (await second.json()) as { id: string };
    // Its vendor answers `done` at once; a lease is 1 s. 8 s is ample.
    const task = await settledTask(gateway, user.key, id, 8_000);
    expect({ status: task.status, billing: task.billing.state }).toEqual({
      status: "succeeded",
      billing: "settled",
    });
  }, 20_000);

  it("a task whose every poll answer never ends is expired and refunded after tasks.max_age_seconds", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const submitted = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "stalling-video", prompt: "a bird", duration: 2, resolution: "480p" },
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    // max_age_seconds is 10; allow 6 s more.
    const task = await settledTask(gateway, user.key, id, 16_000);
    expect({
      status: task.status,
      billing: task.billing.state,
      charged: before - (await balanceOf(gateway, user.key)),
    }).toEqual({ status: "expired", billing: "released", charged: 0 });
  }, 25_000);
});

describe("xAI video: a poll that outlives the task's age limit", () => {
  let gateway: TestGateway;
  let vendor: Server;

  beforeAll(async () => {
    const started = await startVendor((request, response, body) => {
      if (request.method === "POST") {
        json(response, 200, { request_id: (JSON.parse(body) as { prompt: string }).prompt });
        return;
      }
      // Headers, then nothing at all: only the engine's own bound ends this poll.
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"status":"pending"');
    });
    vendor = started.server;
    gateway = await startTestGateway({
      config: {
        upstream: { first_byte_timeout_ms: 60_000, idle_timeout_ms: 60_000 },
        tasks: {
          tick_ms: 50,
          poll_min_interval_ms: 50,
          poll_max_interval_ms: 200,
          // A poll may last three leases (90 s): far past the task's 10 s age limit.
          lease_seconds: 30,
          max_age_seconds: 10,
        },
        catalog: {
          models: [xaiVideoModel("hanging-video", started.url, { perSecond: PER_SECOND })],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await stopVendor(vendor);
  });

  it("the poll is cut at the age limit and the task expired and refunded then, not when the poll's lease bound runs out", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const submitted = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "hanging-video", prompt: "a fox", duration: 2, resolution: "480p" },
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    // The age limit is 10 s and the poll's own bound 90 s: 20 s tells them apart with room.
    const task = await settledTask(gateway, user.key, id, 20_000);
    expect({
      status: task.status,
      error: task.error?.code,
      billing: task.billing.state,
      charged: before - (await balanceOf(gateway, user.key)),
    }).toEqual({ status: "expired", error: "TaskExpired", billing: "released", charged: 0 });
  }, 30_000);
});
