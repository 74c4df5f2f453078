/**
 * A video task in flight when a reload changes its model's route, or removes a model that a
 * reload had added. The task was accepted, held and submitted to the vendor: it must still be
 * followed to its end at the route it was submitted to and settled, and a queued one can still
 * be canceled, not left held until it expires (the engine found no route and waited).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { type RunningGateway, startGateway } from "../src/main.ts";
import { makeTempDir, removeTempDirs } from "./support/cli-process.ts";
import { freshDatabase } from "./support/cluster.ts";
import { TEST_BACKEND } from "./support/gateway-harness.ts";
import { REDIS_URL, testPrefix } from "./support/redis.ts";

afterAll(removeTempDirs);

const HOUSE_VIDEO = (id: string, upstream: string) => `
    - id: ${id}
      endpoint: video
      family: motion
      display_name: House Video
      owned_by: self-hosted
      capabilities:
        resolutions: ["720p"]
        durations: [2, 3, 4, 5]
        aspect_ratios: ["16:9"]
        video_protocol: "2.6"
        video_input: t2v
      pricing:
        per_video_second: { "720p": 100000 }
      routes:
        - { vendor: dashscope, upstream_model: ${upstream} }
`;

function configYaml(database: string, models: string): string {
  return `
database_url: ${JSON.stringify(database)}
${TEST_BACKEND === "postgres" ? `redis: { url: ${JSON.stringify(REDIS_URL)}, key_prefix: ${JSON.stringify(testPrefix())} }` : ""}
log_level: silent
server: { port: 0, host: 127.0.0.1, shutdown_grace_seconds: 1, drain_delay_seconds: 0 }
tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 }
catalog:
  models:${models.length > 0 ? models : " []"}
`;
}

interface TaskJson {
  id: string;
  status: string;
  billing: { state: string; held_micros: number; cost_micros: number };
}

async function scenario(first: string, afterSubmit: string, before?: string) {
  const database = TEST_BACKEND === "postgres" ? await freshDatabase() : undefined;
  const file = join(makeTempDir("video-route-"), "switchyard.yaml");
  const url = database?.url ?? ":memory:";
  writeFileSync(file, configYaml(url, first));
  const env = { SWITCHYARD_CONFIG: file };
  const gateway: RunningGateway = await startGateway({
    env,
    config: loadConfig({ env }),
    print: () => {},
  });
  try {
    if (before !== undefined) {
      writeFileSync(file, configYaml(url, before));
      expect(gateway.reload()).toBeDefined();
    }
    const key = gateway.bootstrapKey as string;
    const response = await fetch(`${gateway.url}/v1/videos/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "house-video",
        duration: 5,
        resolution: "720p",
        input: { prompt: "a lighthouse [[sandbox:video-seconds=1]]" },
        parameters: { size: "1280*720", duration: 5, prompt_extend: false },
      }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const task = (await response.json()) as TaskJson;
    writeFileSync(file, configYaml(url, afterSubmit));
    expect(gateway.reload()).toBeDefined();
    const read = async () =>
      (await (
        await fetch(`${gateway.url}/v1/videos/generations/${task.id}`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as TaskJson;
    const deadline = Date.now() + 8000;
    let now = await read();
    while (!["settled", "released"].includes(now.billing.state) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      now = await read();
    }
    return { status: now.status, billing: now.billing.state, cost: now.billing.cost_micros };
  } finally {
    await gateway.close();
    await database?.drop();
  }
}

describe("reload with a video task in flight", () => {
  it("control: a reload that changes nothing about the route lets the task finish", async () => {
    const same = HOUSE_VIDEO("house-video", "wan2.6-t2v");
    expect(await scenario(same, same)).toEqual({
      status: "succeeded",
      billing: "settled",
      cost: 500_000,
    });
  }, 30_000);

  it("a reload that moves the model to another upstream model still follows the submitted task", async () => {
    expect(
      await scenario(
        HOUSE_VIDEO("house-video", "wan2.6-t2v"),
        HOUSE_VIDEO("house-video", "wan2.5-t2v-preview"),
      ),
    ).toEqual({ status: "succeeded", billing: "settled", cost: 500_000 });
  }, 30_000);

  it("a model added by one reload and removed by the next still has its submitted task followed", async () => {
    expect(await scenario("", "", HOUSE_VIDEO("house-video", "wan2.6-t2v"))).toEqual({
      status: "succeeded",
      billing: "settled",
      cost: 500_000,
    });
  }, 30_000);
});

describe("cancel of a queued video task after a reload removed its model", () => {
  for (const removed of [false, true])
    it(`cancels it and releases its hold (${removed ? "model removed" : "control"})`, async () => {
      const database = TEST_BACKEND === "postgres" ? await freshDatabase() : undefined;
      const file = join(makeTempDir("video-cancel-"), "switchyard.yaml");
      const url = database?.url ?? ":memory:";
      const model = HOUSE_VIDEO("house-video", "wan2.6-t2v");
      writeFileSync(file, configYaml(url, model));
      const env = { SWITCHYARD_CONFIG: file };
      const gateway = await startGateway({ env, config: loadConfig({ env }), print: () => {} });
      try {
        const key = gateway.bootstrapKey as string;
        const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
        const response = await fetch(`${gateway.url}/v1/videos/generations`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            model: "house-video",
            duration: 5,
            resolution: "720p",
            input: { prompt: "a lighthouse [[sandbox:video-seconds=400]]" },
            parameters: { size: "1280*720", duration: 5, prompt_extend: false },
          }),
        });
        expect(response.status).toBe(202);
        const task = (await response.json()) as TaskJson;
        // Let the engine poll it once (it is then followed by the engine's own copy).
        await new Promise((resolve) => setTimeout(resolve, 500));
        writeFileSync(file, configYaml(url, removed ? "" : model));
        expect(gateway.reload()).toBeDefined();
        const cancel = await fetch(`${gateway.url}/v1/videos/generations/${task.id}/cancel`, {
          method: "POST",
          headers,
          body: "{}",
        });
        const text = await cancel.text();
        expect(cancel.status, text).toBe(200);
      } finally {
        await gateway.close();
        await database?.drop();
      }
    }, 30_000);
});
