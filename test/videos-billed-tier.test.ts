/**
 * Family A (Wan) video tasks make the tier and the duration they bill: the vendor reads the tier
 * from `parameters.size` (2.5/2.6 text and reference to video) or `parameters.resolution` (2.6
 * image to video, 2.7) and makes 1080p when that field is missing, so the gateway adds the billed
 * tier (and duration) when `parameters` lacks them, and refuses a `parameters` that names
 * another tier in either field (docs/videos.md). Without that, a 720p price bought 1080p video.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { parseMp4 } from "./support/mp4.ts";

const PATH = "/v1/videos/generations";
const FAST = "[[sandbox:video-seconds=0.3]]";
const IMAGE = "https://example.com/first-frame.png";

interface TaskRecord {
  id: string;
  status: string;
  resolution: string;
  content: { video_url: string } | null;
  usage?: Record<string, unknown> | null;
  billing: {
    state: string;
    held_micros: number;
    cost_micros: number;
    billed_seconds: number | null;
  };
  finished_at: number | null;
}

describe("video tasks: the tier billed is the tier made", () => {
  let gateway: TestGateway;
  let user: { key: string };

  const submit = (json: unknown) => gateway.request(PATH, { key: user.key, json });

  async function follow(id: string): Promise<TaskRecord> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const task = (await (
        await gateway.request(`${PATH}/${id}`, { key: user.key })
      ).json()) as TaskRecord;
      if (
        task.finished_at !== null &&
        (task.billing.state === "settled" || task.billing.state === "released")
      )
        return task;
      if (Date.now() > deadline) throw new Error(`not final: ${JSON.stringify(task)}`);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  }

  async function run(body: unknown) {
    const response = await submit(body);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as TaskRecord;
    const task = await follow(id);
    expect(task.status).toBe("succeeded");
    const mp4 = parseMp4(
      new Uint8Array(await (await fetch(task.content!.video_url)).arrayBuffer()),
    );
    return {
      billedResolution: task.resolution,
      costMicros: task.billing.cost_micros,
      vendorTier: task.usage?.SR,
      shape: mp4.width > mp4.height ? "landscape" : mp4.width < mp4.height ? "portrait" : "square",
    };
  }

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { tasks: { tick_ms: 20, poll_min_interval_ms: 20 } },
    });
    user = await createUser(gateway, { balanceMicros: 50_000_000 });
  });
  afterAll(() => gateway.close());

  it("2.6 t2v without parameters.size: the vendor is asked for the billed 720p", async () => {
    const result = await run({
      model: "motion2.6-t2v",
      duration: 5,
      resolution: "720p",
      input: { prompt: `a lighthouse ${FAST}` },
      parameters: { duration: 5 },
    });
    // 5 s at 720p is 500 000 micro-USD.
    expect(result).toMatchObject({
      billedResolution: "720p",
      vendorTier: 720,
      costMicros: 500_000,
      shape: "landscape",
    });
  });

  it("a body without parameters (as MCP's generate_video sends) gets the billed tier and duration", async () => {
    const result = await run({
      model: "motion2.6-t2v",
      duration: 3,
      resolution: "1080p",
      aspect_ratio: "9:16",
      input: { prompt: `a tower ${FAST}` },
    });
    // 3 s at 1080p is 450 000 micro-USD, in the 9:16 asked for (1080*1920).
    expect(result).toMatchObject({
      billedResolution: "1080p",
      vendorTier: 1080,
      costMicros: 450_000,
      shape: "portrait",
    });
  });
  it("2.7 i2v (a 720p-only model) without parameters.resolution: the vendor is asked for 720P", async () => {
    const result = await run({
      model: "motion2.7-i2v",
      duration: 5,
      input: { prompt: `slow pan ${FAST}`, media: [{ type: "first_frame", url: IMAGE }] },
      parameters: { duration: 5 },
    });
    // The model is listed and priced at 720p only; the vendor must be asked for 720P.
    expect({ billed: result.billedResolution, vendorTier: result.vendorTier }).toEqual({
      billed: "720p",
      vendorTier: 720,
    });
  });

  it("refuses parameters naming another tier in the field the vendor reads, whatever the other says", async () => {
    const response = await submit({
      model: "motion2.6-t2v",
      duration: 5,
      resolution: "720p",
      input: { prompt: `a harbour ${FAST}` },
      parameters: { resolution: "720P", size: "1920*1080", duration: 5 },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "InvalidParameter" });
  });
});
