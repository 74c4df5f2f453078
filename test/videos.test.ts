/**
 * `POST /v1/videos/generations` and the task API end to end, against the sandbox's DashScope
 * and xAI video emulation: the whole lifecycle of a 2.6 text-to-video, a 2.7 image-to-video and
 * a family B image-to-video task (states in order, the final record, a real MP4 behind the
 * link), pass-through fields arriving unchanged, the vendor's refusals passed on, billing (held
 * at submission, charged at the reported duration, released on failure), idempotent
 * submission, and reads by other accounts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { parseMp4 } from "./support/mp4.ts";

const PATH = "/v1/videos/generations";
const FAST = "[[sandbox:video-seconds=0.4]]";
const IMAGE = "https://example.com/first-frame.png";

interface TaskRecord {
  id: string;
  status: string;
  provider_task_id: string | null;
  model: string;
  content: { video_url: string } | null;
  usage?: Record<string, unknown> | null;
  seed?: number | null;
  error: { code: string; message: string } | null;
  billing: {
    state: string;
    held_micros: number;
    cost_micros: number;
    billed_seconds: number | null;
  };
  created_at: number;
  finished_at: number | null;
}

describe("video tasks", () => {
  let gateway: TestGateway;
  let user: { accountId: string; key: string };

  const submit = (json: unknown, key = user.key, headers: Record<string, string> = {}) =>
    gateway.request(PATH, { key, json, headers });
  const read = async (id: string, key = user.key) => gateway.request(`${PATH}/${id}`, { key });
  /** The task submissions the sandbox received (polls left out). */
  const sandboxRequests = async () => {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests?limit=200`);
    const { requests } = (await response.json()) as {
      requests: { method?: string; path: string; body: unknown }[];
    };
    return requests.filter(
      (entry) =>
        entry.path.endsWith("/video-generation/video-synthesis") ||
        entry.path.endsWith("/videos/generations"),
    );
  };
  const balance = async (key = user.key) =>
    (await (await gateway.request("/v1/account/balance", { key })).json()) as {
      balance_micros: number;
      held_micros: number;
    };

  /**
   * Polls the task until it is final and its billing is closed (`settled` or `released`; a
   * task passes through `finalizing` while its charge is written), returning every status seen
   * in order.
   */
  async function follow(id: string, key = user.key): Promise<{ seen: string[]; task: TaskRecord }> {
    const seen: string[] = [];
    const deadline = Date.now() + 15_000;
    for (;;) {
      const task = (await (await read(id, key)).json()) as TaskRecord;
      if (seen.at(-1) !== task.status) seen.push(task.status);
      const billingClosed = task.billing.state === "settled" || task.billing.state === "released";
      if (task.finished_at !== null && billingClosed) return { seen, task };
      if (Date.now() > deadline) throw new Error(`task ${id} not final: ${JSON.stringify(task)}`);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  }

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { tasks: { tick_ms: 20, poll_min_interval_ms: 20 } },
    });
    user = await createUser(gateway, { balanceMicros: 20_000_000 });
  });
  afterAll(() => gateway.close());

  it("runs a 2.6 text-to-video task to a real MP4, billed at the reported seconds", async () => {
    const before = await balance();
    const body = {
      model: "motion2.6-t2v",
      duration: 5,
      resolution: "720p",
      input: { prompt: `a lighthouse at dusk ${FAST}` },
      parameters: { size: "1280*720", duration: 5, prompt_extend: false, seed: 42 },
    };
    const response = await submit(body);
    expect(response.status).toBe(202);
    expect(response.headers.get("x-switchyard-sandbox")).toBe("true");
    const accepted = (await response.json()) as TaskRecord;
    expect(accepted.id).toMatch(/^vtask_/);
    expect((await read(accepted.id)).headers.get("x-switchyard-sandbox")).toBe("true");
    expect(accepted.status).toBe("queued");
    expect(accepted.billing).toMatchObject({ state: "held", held_micros: 500_000 });
    expect((await balance()).held_micros - before.held_micros).toBe(500_000);

    // input and parameters reached the vendor exactly as sent.
    const upstream = (await sandboxRequests()).filter((entry) =>
      entry.path.endsWith("/video-generation/video-synthesis"),
    );
    expect(upstream.at(-1)?.body).toEqual({
      model: "wan2.6-t2v",
      input: body.input,
      parameters: body.parameters,
    });

    const { seen, task } = await follow(accepted.id);
    // Every state seen comes in lifecycle order, ending with success.
    const order = ["queued", "running", "succeeded"];
    expect(seen.map((status) => order.indexOf(status))).toEqual(
      [...seen.map((status) => order.indexOf(status))].sort(),
    );
    expect(seen.at(-1)).toBe("succeeded");
    expect(task.content?.video_url).toMatch(/^http/);
    expect(task.usage).toBeTruthy();
    expect(task.seed).toBe(42);
    expect(task.billing).toMatchObject({
      state: "settled",
      cost_micros: 500_000,
      billed_seconds: 5,
    });
    const after = await balance();
    expect(after.balance_micros).toBe(before.balance_micros - 500_000);
    expect(after.held_micros).toBe(before.held_micros);

    const video = await fetch(task.content!.video_url);
    expect(video.status).toBe(200);
    const mp4 = parseMp4(new Uint8Array(await video.arrayBuffer()));
    expect(mp4.durationSeconds).toBe(5);
    expect(mp4.samples).toBe(5);

    // The vendor's task id reads the same task.
    const byVendorId = (await (await read(task.provider_task_id!)).json()) as TaskRecord;
    expect(byVendorId.id).toBe(task.id);
  });

  it("runs a 2.7 image-to-video task with media", async () => {
    const body = {
      model: "motion2.7-i2v",
      resolution: "720p",
      input: { prompt: `slow pan ${FAST}`, media: [{ type: "first_frame", url: IMAGE }] },
      parameters: { resolution: "720P", duration: 5 },
    };
    const response = await submit(body);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as TaskRecord;
    const { task } = await follow(id);
    expect(task.status).toBe("succeeded");
    expect(task.content?.video_url).toBeTruthy();
    expect(task.usage).toMatchObject({ output_video_duration: 5, video_count: 1 });
    expect(task).toHaveProperty("seed");
    const mp4 = parseMp4(
      new Uint8Array(await (await fetch(task.content!.video_url)).arrayBuffer()),
    );
    expect(mp4.durationSeconds).toBe(5);
  });

  it("runs a family B image-to-video task with a directly downloadable video", async () => {
    const response = await submit({
      model: "gen-video",
      prompt: `the wind picks up ${FAST}`,
      image: { url: IMAGE },
      duration: 3,
      resolution: "480p",
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as TaskRecord;
    const { task } = await follow(id);
    expect(task.status).toBe("succeeded");
    expect(task.billing).toMatchObject({ state: "settled", cost_micros: 150_000 });
    expect(task.usage).toBeTruthy();
    expect(task).toHaveProperty("seed");
    const mp4 = parseMp4(
      new Uint8Array(await (await fetch(task.content!.video_url)).arrayBuffer()),
    );
    expect(mp4.durationSeconds).toBe(3);
  });

  it("releases the whole hold of a task that fails, with the vendor's late error", async () => {
    const before = await balance();
    // 2.6-style img_url sent to a 2.7 model: accepted, then failed by the vendor.
    const response = await submit({
      model: "motion2.7-i2v",
      resolution: "720p",
      input: { prompt: `late failure ${FAST}`, img_url: IMAGE },
      parameters: { resolution: "720P", duration: 5 },
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as TaskRecord;
    const { task } = await follow(id);
    expect(task.status).toBe("failed");
    expect(task.error?.message).toMatch(/input\.media/);
    expect(task.billing).toMatchObject({ state: "released", cost_micros: 0 });
    expect(await balance()).toEqual(before);
  });

  it("returns the vendor's 400 text for a wrong pass-through field, holding nothing", async () => {
    const before = await balance();
    const response = await submit({
      model: "motion2.6-t2v",
      input: { prompt: "x" },
      parameters: { size: "1280*720", duration: 5, shot_type: "sideways" },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; message: string; request_id: string };
    expect(body.code).toBeTruthy();
    expect(body.message).toMatch(/shot_type/);
    expect(await balance()).toEqual(before);
  });

  it.each([
    ["a string image", { model: "gen-video", prompt: "x", image: IMAGE }, /image/],
    ["no image for an image-only model", { model: "gen-video-1.5-preview", prompt: "x" }, /image/],
    [
      "a resolution the model lacks",
      { model: "motion2.7-t2v", resolution: "480p", input: { prompt: "x" } },
      /resolution/,
    ],
    [
      "parameters asking for more seconds than billed",
      {
        model: "motion2.6-t2v",
        duration: 5,
        input: { prompt: "x" },
        parameters: { size: "1280*720", duration: 10 },
      },
      /duration/,
    ],
    ["no input on family A", { model: "motion2.6-t2v" }, /input/],
  ])("refuses %s with 400 before anything is sent", async (_name, body, message) => {
    const sent = (await sandboxRequests()).length;
    const response = await submit(body);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(message);
    expect((await sandboxRequests()).length).toBe(sent);
  });

  it("answers 402 and submits nothing when the balance cannot cover the video", async () => {
    const poor = await createUser(gateway, { balanceMicros: 100_000 });
    const sent = (await sandboxRequests()).length;
    const response = await submit(
      {
        model: "motion2.6-t2v",
        duration: 5,
        input: { prompt: "x" },
        parameters: { size: "1280*720" },
      },
      poor.key,
    );
    expect(response.status).toBe(402);
    expect((await sandboxRequests()).length).toBe(sent);
  });

  it("creates one task and one hold for a retried submission with the same Idempotency-Key", async () => {
    const other = await createUser(gateway, { balanceMicros: 5_000_000 });
    const body = { model: "gen-video", prompt: `once ${FAST}`, duration: 2, resolution: "480p" };
    const headers = { "idempotency-key": "retry-me-1" };
    const responses = await Promise.all([1, 2, 3].map(() => submit(body, other.key, headers)));
    const ids = new Set<string>();
    for (const response of responses) {
      expect(response.status).toBe(202);
      ids.add(((await response.json()) as TaskRecord).id);
    }
    expect(ids.size).toBe(1);
    expect((await balance(other.key)).held_micros).toBe(100_000);
    const conflict = await submit({ ...body, duration: 3 }, other.key, headers);
    expect(conflict.status).toBe(409);
    const list = (await (await gateway.request(PATH, { key: other.key })).json()) as {
      data: TaskRecord[];
    };
    expect(list.data.map((task) => task.id)).toEqual([...ids]);
  });

  it("keeps a large request body only in summary on the task", async () => {
    const dataUri = `data:image/png;base64,${"A".repeat(200_000)}`;
    const response = await submit({
      model: "gen-video",
      prompt: `inline ${FAST}`,
      image: { url: dataUri },
      duration: 1,
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as TaskRecord;
    const stored = await gateway.services.store.findVideoTaskById(id);
    expect(JSON.stringify(stored?.requestBody).length).toBeLessThan(1000);
    expect(stored?.requestBody).toMatchObject({ model: "gen-video", duration: 1 });
  });

  it("shows a task to its own account only", async () => {
    const stranger = await createUser(gateway);
    const response = await submit({ model: "gen-video", prompt: `mine ${FAST}`, duration: 1 });
    const task = (await response.json()) as TaskRecord;
    expect((await read(task.id, stranger.key)).status).toBe(404);
    expect((await read(task.provider_task_id!, stranger.key)).status).toBe(404);
    expect((await read("vtask_doesnotexist")).status).toBe(404);
  });

  it("cancels a queued DashScope task and releases its hold; a final one cannot be canceled", async () => {
    const before = await balance();
    const response = await submit({
      model: "motion2.6-t2v",
      input: { prompt: "a long one [[sandbox:video-seconds=30]]" },
      parameters: { size: "1280*720" },
    });
    const task = (await response.json()) as TaskRecord;
    const canceled = await gateway.request(`${PATH}/${task.id}/cancel`, {
      key: user.key,
      method: "POST",
    });
    expect(canceled.status).toBe(200);
    expect(((await canceled.json()) as TaskRecord).status).toBe("canceled");
    const { task: final } = await follow(task.id);
    expect(final.billing).toMatchObject({ state: "released", cost_micros: 0 });
    expect(await balance()).toEqual(before);
    const again = await gateway.request(`${PATH}/${task.id}/cancel`, {
      key: user.key,
      method: "POST",
    });
    expect(again.status).toBe(409);
  });

  it("lists video models as available and quotes them", async () => {
    const models = (await (await gateway.request("/v1/models", { key: user.key })).json()) as {
      data: { id: string; available?: boolean }[];
    };
    const motion = models.data.find((model) => model.id === "motion2.6-t2v");
    expect(motion?.available).not.toBe(false);
    const quote = await gateway.request("/v1/billing/quote", {
      key: user.key,
      json: { model: "motion2.6-t2v", duration: 10, resolution: "1080p", input: { prompt: "x" } },
    });
    expect(quote.status).toBe(200);
    expect(((await quote.json()) as { max_cost_micros: number }).max_cost_micros).toBe(1_500_000);
  });

  it("keeps the ledger consistent", async () => {
    const report = (await (
      await gateway.request("/v1/admin/ledger/verify", { key: gateway.adminKey })
    )
      .json()
      .catch(() => undefined)) as { problems?: unknown[] } | undefined;
    const problems = report?.problems ?? (await gateway.services.store.verify()).problems;
    expect(problems).toEqual([]);
  });
});
