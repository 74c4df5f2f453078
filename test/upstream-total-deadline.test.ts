/**
 * A total deadline on the upstream calls whose answer is one JSON body: a `pictor` image
 * generation (DashScope), a video submission (xAI, DashScope), a chat answer that is not
 * streamed and an embedding. A vendor that answers its
 * headers at once and then trickles its body forever (a byte every 200 ms, below the idle
 * timeout) ends the request with 504 `upstream_timeout` within the first-byte plus the idle
 * timeout, and nothing is charged: the hold is released, a video task fails.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeChatModel } from "./support/fake-vendor.ts";
import {
  balanceOf,
  createUser,
  startTestGateway,
  type TestGateway,
} from "./support/gateway-harness.ts";
import { pictorModel, xaiVideoModel } from "./support/vendor-models.ts";

/** first_byte_timeout_ms + idle_timeout_ms: the whole answer must arrive within this. */
const FIRST_BYTE_MS = 500;
const IDLE_MS = 500;
const TOTAL_MS = FIRST_BYTE_MS + IDLE_MS;
/** A byte this often keeps the idle timeout from ever firing. */
const TRICKLE_EVERY_MS = 200;
/** The client gives up here: without a total deadline the request never ends. */
const CLIENT_GIVES_UP_MS = 8_000;

/** A vendor that answers 200 with a JSON body that never ends. */
async function startTricklingVendor(): Promise<{ server: Server; url: string; calls: string[] }> {
  const calls: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      calls.push(request.url ?? "");
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"request_id":"trickle-1","output":{"task_id":"trickle-1"');
      const timer = setInterval(() => response.write(" "), TRICKLE_EVERY_MS);
      timers.add(timer);
      response.on("close", () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    });
  });
  server.on("close", () => {
    for (const timer of timers) clearInterval(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

const PER_IMAGE = 20_000;
const PER_SECOND = 50_000;

function wanVideoModel(baseUrl: string) {
  return {
    id: "trickle-wan",
    endpoint: "video",
    family: "motion",
    display_name: "Wan on a trickling vendor",
    owned_by: "self-hosted",
    capabilities: {
      resolutions: ["720p"],
      durations: [5],
      aspect_ratios: ["16:9"],
      video_protocol: "2.6",
      video_input: "t2v",
    },
    pricing: { per_video_second: { "720p": PER_SECOND } },
    routes: [
      { vendor: "trickle", adapter: "dashscope", base_url: baseUrl, upstream_model: "wan2.6-t2v" },
    ],
  };
}

describe("a vendor that trickles its answer's body forever", () => {
  let gateway: TestGateway;
  let vendor: Awaited<ReturnType<typeof startTricklingVendor>>;

  beforeAll(async () => {
    vendor = await startTricklingVendor();
    gateway = await startTestGateway({
      config: {
        upstream: { first_byte_timeout_ms: FIRST_BYTE_MS, idle_timeout_ms: IDLE_MS },
        catalog: {
          models: [
            pictorModel("trickle-pictor", vendor.url, { perImage: PER_IMAGE }),
            wanVideoModel(vendor.url),
            xaiVideoModel("trickle-xai", vendor.url, { perSecond: PER_SECOND }),
            fakeChatModel({ id: "trickle-chat", baseUrl: `${vendor.url}/v1` }),
            {
              id: "trickle-embed",
              endpoint: "embedding",
              family: "trickle-embed",
              display_name: "Embeddings on a trickling vendor",
              owned_by: "self-hosted",
              capabilities: { dimensions: [4], default_dimensions: 4 },
              pricing: { per_1m_tokens: { input: 1_000_000, output: 0 } },
              routes: [
                {
                  vendor: "trickle",
                  adapter: "openai-compatible",
                  base_url: `${vendor.url}/v1`,
                  upstream_model: "embed-1",
                },
              ],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    vendor?.server.closeAllConnections();
    await new Promise((resolve) => vendor?.server.close(resolve));
  });

  /** Sends `body`, timing the answer; the client gives up after CLIENT_GIVES_UP_MS. */
  async function timed(path: string, key: string, body: unknown) {
    const started = Date.now();
    const response = await gateway.request(path, {
      key,
      json: body,
      signal: AbortSignal.timeout(CLIENT_GIVES_UP_MS),
    });
    const text = await response.text();
    return { status: response.status, text, elapsedMs: Date.now() - started };
  }

  it("a pictor generation ends 504 upstream_timeout within the deadline, charged nothing", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const before = await balanceOf(gateway, user.key);
    const answer = await timed("/v1/images/generations", user.key, {
      model: "trickle-pictor",
      input: { messages: [{ role: "user", content: [{ text: "a lighthouse" }] }] },
    });
    const body = JSON.parse(answer.text) as { code: string };
    expect({ status: answer.status, code: body.code }).toEqual({
      status: 504,
      code: "RequestTimeOut",
    });
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(TOTAL_MS - 50);
    expect(answer.elapsedMs).toBeLessThan(TOTAL_MS + 2_000);
    expect(await balanceOf(gateway, user.key)).toBe(before);
  }, 15_000);

  it.each([
    [
      "xAI",
      { model: "trickle-xai", prompt: "a cat", duration: 2, resolution: "480p" },
      (text: string) => (JSON.parse(text) as { error: { code: string } }).error.code,
      "upstream_timeout",
    ],
    [
      "DashScope",
      {
        model: "trickle-wan",
        duration: 5,
        resolution: "720p",
        input: { prompt: "a cat" },
      },
      (text: string) => (JSON.parse(text) as { code: string }).code,
      "RequestTimeOut",
    ],
  ])(
    "a %s video submission ends 504 within the deadline, its task failed and its hold released",
    async (_vendor, body, codeOf, code) => {
      const user = await createUser(gateway, { balanceMicros: 10_000_000 });
      const before = await balanceOf(gateway, user.key);
      const answer = await timed("/v1/videos/generations", user.key, body);
      expect({ status: answer.status, code: codeOf(answer.text) }).toEqual({ status: 504, code });
      expect(answer.elapsedMs).toBeGreaterThanOrEqual(TOTAL_MS - 50);
      expect(answer.elapsedMs).toBeLessThan(TOTAL_MS + 2_000);
      expect(await balanceOf(gateway, user.key)).toBe(before);
      const list = (await (
        await gateway.request("/v1/videos/generations", { key: user.key })
      ).json()) as { data: { status: string; billing: { state: string } }[] };
      expect(list.data.map((task) => [task.status, task.billing.state])).toEqual([
        ["failed", "released"],
      ]);
    },
    15_000,
  );

  it.each([
    [
      "a chat answer (not streamed)",
      "/v1/chat/completions",
      { model: "trickle-chat", messages: [{ role: "user", content: "hi" }] },
    ],
    ["an embedding", "/v1/embeddings", { model: "trickle-embed", input: "hi" }],
  ])(
    "%s ends 504 upstream_timeout within the deadline, charged nothing",
    async (_, path, body) => {
      const user = await createUser(gateway, { balanceMicros: 10_000_000 });
      const before = await balanceOf(gateway, user.key);
      const answer = await timed(path, user.key, body);
      const code = (JSON.parse(answer.text) as { error: { code: string } }).error.code;
      expect({ status: answer.status, code }).toEqual({ status: 504, code: "upstream_timeout" });
      // A timeout is retryable: the route may be tried again, each attempt within the deadline.
      expect(answer.elapsedMs).toBeLessThan(3 * TOTAL_MS + 2_000);
      expect(await balanceOf(gateway, user.key)).toBe(before);
    },
    15_000,
  );
});
