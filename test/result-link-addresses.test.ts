/**
 * Result links a vendor hands back whose host is a literal link-local or cloud metadata address
 * (169.254.169.254, fe80::/10, fd00:ec2::254, 100.100.100.200, …), which no client can fetch:
 * an xAI video `done` with such a link is a failed task (`invalid_result_link`, hold released),
 * a pictor image with one is a failed request charged nothing. Loopback and private-network
 * links still pass (the sandbox serves results on 127.0.0.1; vendors run on private networks).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeVendor, startFakeVendor } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { pictorModel, xaiVideoModel } from "./support/vendor-models.ts";

const PER_SECOND = 50_000;
const PER_IMAGE = 20_000;

/** Link-local and metadata literals, in several of the forms a URL parser accepts. */
const UNREACHABLE_LINKS: [string, string][] = [
  ["aws-metadata", "http://169.254.169.254/latest/meta-data/v.mp4"],
  ["metadata-as-decimal", "http://2852039166/v.mp4"],
  ["link-local-v4", "https://169.254.10.20/v.mp4"],
  ["link-local-v6", "http://[fe80::1]/v.mp4"],
  ["aws-metadata-v6", "http://[fd00:ec2::254]/v.mp4"],
  ["alibaba-metadata", "http://100.100.100.200/latest/v.mp4"],
  ["mapped-metadata", "http://[::ffff:169.254.169.254]/v.mp4"],
];

/** Links that stay usable: loopback (the sandbox), private networks, a public host name. */
const REACHABLE_LINKS: [string, string][] = [
  ["loopback", "http://127.0.0.1:9/__results/v.mp4"],
  ["private", "http://10.0.0.5/v.mp4"],
  ["host-name", "https://vidgen.x.ai/v.mp4"],
];

interface TaskRecord {
  status: string;
  content: { video_url: string } | null;
  error: { code: string } | null;
  billing: { state: string };
}

describe("xAI video: a 'done' whose link is to a link-local or metadata address", () => {
  let gateway: TestGateway;
  let vendor: Server;
  const videoUrls = new Map<string, string>();

  beforeAll(async () => {
    vendor = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => {
        body += chunk;
      });
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" });
        if (request.method === "POST") {
          response.end(
            JSON.stringify({ request_id: (JSON.parse(body) as { prompt: string }).prompt }),
          );
          return;
        }
        const id = decodeURIComponent((request.url ?? "").split("/").pop() ?? "");
        response.end(
          JSON.stringify({
            status: "done",
            progress: 100,
            video: { url: videoUrls.get(id), duration: 2, respect_moderation: true },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 50, poll_min_interval_ms: 50, poll_max_interval_ms: 200 },
        catalog: { models: [xaiVideoModel("link-video", url, { perSecond: PER_SECOND })] },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    vendor?.closeAllConnections();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  async function runTask(requestId: string, videoUrl: string) {
    videoUrls.set(requestId, videoUrl);
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const submitted = await gateway.request("/v1/videos/generations", {
      key: user.key,
      json: { model: "link-video", prompt: requestId, duration: 2, resolution: "480p" },
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    const deadline = Date.now() + 8_000;
    let task: TaskRecord;
    for (;;) {
      task = (await (
        await gateway.request(`/v1/videos/generations/${id}`, { key: user.key })
      ).json()) as TaskRecord;
      if (task.billing.state === "settled" || task.billing.state === "released") break;
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { task, charged: before - (await balanceOf(gateway, user.key)) };
  }

  it.each(UNREACHABLE_LINKS)(
    "a link to %s (%s) fails the task with invalid_result_link, refunded",
    async (requestId, videoUrl) => {
      const { task, charged } = await runTask(requestId, videoUrl);
      expect({
        status: task.status,
        code: task.error?.code ?? null,
        deliveredUrl: task.content?.video_url ?? null,
        billing: task.billing.state,
        charged,
      }).toEqual({
        status: "failed",
        code: "invalid_result_link",
        deliveredUrl: null,
        billing: "released",
        charged: 0,
      });
    },
    15_000,
  );

  it.each(REACHABLE_LINKS)(
    "a %s link (%s) is still handed on and charged",
    async (requestId, videoUrl) => {
      const { task, charged } = await runTask(requestId, videoUrl);
      expect({ status: task.status, billing: task.billing.state }).toEqual({
        status: "succeeded",
        billing: "settled",
      });
      expect(task.content?.video_url).toBe(videoUrl);
      expect(charged).toBe(2 * PER_SECOND);
    },
    15_000,
  );
});

describe("pictor: an image link to a link-local or metadata address", () => {
  let gateway: TestGateway;
  let vendor: FakeVendor;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    gateway = await startTestGateway({
      config: {
        catalog: {
          models: [pictorModel("link-pictor", vendor.url, { perImage: PER_IMAGE })],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await vendor?.close();
  });

  async function generate(imageUrl: string) {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    vendor.answer({
      body: {
        request_id: "r-1",
        output: {
          choices: [
            {
              finish_reason: "stop",
              message: { role: "assistant", content: [{ image: imageUrl }] },
            },
          ],
        },
        usage: { image_count: 1, width: 1024, height: 1024 },
      },
    });
    const before = await balanceOf(gateway, user.key);
    const response = await gateway.request("/v1/images/generations", {
      key: user.key,
      json: {
        model: "link-pictor",
        input: { messages: [{ role: "user", content: [{ text: "a lighthouse" }] }] },
      },
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      charged: before - (await balanceOf(gateway, user.key)),
    };
  }

  it.each(UNREACHABLE_LINKS)(
    "an image link to %s (%s) is a 502, not handed on, charged nothing",
    async (_name, imageUrl) => {
      const answer = await generate(imageUrl.replace(/v\.mp4$/, "i.png"));
      expect({ status: answer.status, charged: answer.charged }).toEqual({
        status: 502,
        charged: 0,
      });
      expect(answer.text).not.toContain("i.png");
    },
  );

  it.each(REACHABLE_LINKS)(
    "a %s image link (%s) is handed on and charged",
    async (_name, imageUrl) => {
      const link = imageUrl.replace(/v\.mp4$/, "i.png");
      const answer = await generate(link);
      expect({ status: answer.status, charged: answer.charged }).toEqual({
        status: 200,
        charged: PER_IMAGE,
      });
      expect(answer.text).toContain(link);
    },
  );
});
