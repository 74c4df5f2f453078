/**
 * A reload that drops one resolution's price from a video model while a task at that resolution
 * runs. The task is settled at the price it was held at (its hold's price per second), and one
 * task that cannot be settled must never stop the engine: the `finalizing` tasks are settled
 * first on every tick, and a throw there used to end the whole tick, so no task of any account
 * was polled, settled or had its webhook sent again, on every instance sharing the database.
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

const HOUSE_VIDEO = (resolutions: string[]) => `
    - id: house-video
      endpoint: video
      family: motion
      display_name: House Video
      owned_by: self-hosted
      capabilities:
        resolutions: ${JSON.stringify(resolutions)}
        durations: [2, 3, 4, 5]
        aspect_ratios: ["16:9"]
        video_protocol: "2.6"
        video_input: t2v
      pricing:
        per_video_second: { ${resolutions.map((r) => `"${r}": 100000`).join(", ")} }
      routes:
        - { vendor: dashscope, upstream_model: wan2.6-t2v }
`;

function configYaml(database: string, models: string): string {
  return `
database_url: ${JSON.stringify(database)}
${TEST_BACKEND === "postgres" ? `redis: { url: ${JSON.stringify(REDIS_URL)}, key_prefix: ${JSON.stringify(testPrefix())} }` : ""}
log_level: silent
server: { port: 0, host: 127.0.0.1, shutdown_grace_seconds: 1, drain_delay_seconds: 0 }
tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 }
catalog:
  models:${models}
`;
}

interface TaskJson {
  id: string;
  status: string;
  finished_at: number | null;
  billing: { state: string; held_micros: number; cost_micros: number };
}

describe("reload that drops a resolution of a video model with a task in flight", () => {
  it("settles the task at its hold and keeps the engine working for other tasks", async () => {
    const database = TEST_BACKEND === "postgres" ? await freshDatabase() : undefined;
    const file = join(makeTempDir("video-res-"), "switchyard.yaml");
    const url = database?.url ?? ":memory:";
    writeFileSync(file, configYaml(url, HOUSE_VIDEO(["720p", "1080p"])));
    const env = { SWITCHYARD_CONFIG: file };
    const gateway: RunningGateway = await startGateway({
      env,
      config: loadConfig({ env }),
      print: () => {},
    });
    try {
      const key = gateway.bootstrapKey as string;
      const submit = async (resolution: string, size: string) => {
        const response = await fetch(`${gateway.url}/v1/videos/generations`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: "house-video",
            duration: 5,
            resolution,
            input: { prompt: "a lighthouse [[sandbox:video-seconds=1]]" },
            parameters: { size, duration: 5, prompt_extend: false },
          }),
        });
        expect(response.status, await response.clone().text()).toBe(202);
        return (await response.json()) as TaskJson;
      };
      const read = async (id: string) =>
        (await (
          await fetch(`${gateway.url}/v1/videos/generations/${id}`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json()) as TaskJson;
      const big = await submit("1080p", "1920*1080");
      // The operator stops offering 1080p while the task runs.
      writeFileSync(file, configYaml(url, HOUSE_VIDEO(["720p"])));
      expect(gateway.reload()).toBeDefined();
      // Another task, at a resolution still offered.
      const small = await submit("720p", "1280*720");
      const deadline = Date.now() + 8000;
      let a = await read(big.id);
      let b = await read(small.id);
      const closed = (t: TaskJson) =>
        t.billing.state === "settled" || t.billing.state === "released";
      while (!(closed(a) && closed(b)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        a = await read(big.id);
        b = await read(small.id);
      }
      expect({
        dropped: { status: a.status, billing: a.billing.state, cost: a.billing.cost_micros },
        other: { status: b.status, billing: b.billing.state, cost: b.billing.cost_micros },
      }).toEqual({
        dropped: { status: "succeeded", billing: "settled", cost: 500_000 },
        other: { status: "succeeded", billing: "settled", cost: 500_000 },
      });
    } finally {
      await gateway.close();
      await database?.drop();
    }
  }, 30_000);
});
