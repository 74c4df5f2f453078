/**
 * The life of a Wan video task over real HTTP: PENDING → RUNNING → SUCCEEDED on the sandbox
 * clock (and on the real one, by default in 2.5 s), the SUCCEEDED output and usage of each
 * version, the late failure of wan2.7-i2v sent a 2.6-style `img_url`, the `video-*` faults,
 * cancel, 429 on polling, expiry after 24 h, the MP4 behind `video_url`, and the request log.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../server.ts";
import { advanceClock, readMp4 } from "./video-test-kit.ts";
import { CANCEL_REFUSED_MESSAGE, TASKS_PATH, VIDEO_SYNTHESIS_PATH } from "./wan-routes.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
/** A key per test: the 20-polls-a-second limit counts per key, and tests poll quickly. */
let KEY = "";
let tests = 0;
beforeEach(async () => {
  KEY = `Bearer sk-test-${++tests}`;
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});
type Json = Record<string, unknown>;

interface TaskAnswer {
  request_id: string;
  output: {
    task_id: string;
    task_status: string;
    submit_time: string;
    scheduled_time: string;
    end_time: string;
    orig_prompt?: string;
    actual_prompt?: string;
    video_url?: string;
    code?: string;
  };
  usage?: Json;
  code?: string;
}

async function create(body: Json): Promise<string> {
  const response = await fetch(`${sandbox.url}${VIDEO_SYNTHESIS_PATH}`, {
    method: "POST",
    headers: {
      authorization: KEY,
      "content-type": "application/json",
      "x-dashscope-async": "enable",
    },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as TaskAnswer).output.task_id;
}

async function poll(taskId: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${sandbox.url}${TASKS_PATH}/${taskId}`, {
    headers: { authorization: KEY, ...headers },
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as TaskAnswer,
  };
}

async function output(taskId: string): Promise<TaskAnswer> {
  const answer = await poll(taskId);
  expect(answer.status).toBe(200);
  return answer.body;
}

/** Polls every 100 ms (within the vendor's 20 polls a second) until the task is in `status`. */
async function waitForStatus(
  taskId: string,
  status: string,
  timeoutMs: number,
): Promise<TaskAnswer> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await output(taskId);
    if (body.output.task_status === status) return body;
    if (Date.now() > deadline) throw new Error(`task still ${body.output.task_status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const cancel = (taskId: string) =>
  fetch(`${sandbox.url}${TASKS_PATH}/${taskId}/cancel`, {
    method: "POST",
    headers: { authorization: KEY },
  });

const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const ms = (time: string) => Date.parse(`${time.replace(" ", "T")}Z`);

describe("Wan video tasks", () => {
  it("go PENDING → RUNNING → SUCCEEDED on the sandbox clock", async () => {
    const prompt = "a lighthouse at dusk [[sandbox:video-seconds=40]]";
    const id = await create({
      model: "wan2.6-t2v",
      input: { prompt },
      parameters: { size: "1280*720", duration: 3 },
    });
    const pending = await output(id);
    expect(pending).toEqual({
      request_id: expect.any(String),
      output: { task_id: id, task_status: "PENDING", submit_time: expect.stringMatching(TIME) },
    });
    await advanceClock(sandbox.url, 11);
    const running = await output(id);
    expect(running.output).toMatchObject({
      task_status: "RUNNING",
      scheduled_time: expect.stringMatching(TIME),
    });
    expect(running.output.end_time).toBeUndefined();
    expect(ms(running.output.scheduled_time) - ms(running.output.submit_time)).toBe(10_000);
    await advanceClock(sandbox.url, 30);
    const done = await output(id);
    expect(done.output).toEqual({
      task_id: id,
      task_status: "SUCCEEDED",
      submit_time: pending.output.submit_time,
      scheduled_time: running.output.scheduled_time,
      end_time: expect.stringMatching(TIME),
      orig_prompt: prompt,
      actual_prompt: expect.stringContaining("a lighthouse at dusk"),
      video_url: expect.stringContaining("/__results/video/vid-256x144-3s-"),
    });
    expect(ms(done.output.end_time) - ms(done.output.submit_time)).toBe(40_000);
    expect(done.output.actual_prompt).not.toContain("[[sandbox:");
    expect(done.usage).toEqual({
      duration: 3,
      input_video_duration: 0,
      output_video_duration: 3,
      video_count: 1,
      SR: 720,
      ratio: "16:9",
    });
  });

  it("finish by themselves in 2.5 s by default, and as fast as video-seconds asks", async () => {
    const standard = await create({ model: "wan2.7-t2v", input: { prompt: "rain" } });
    const quick = await create({
      model: "wan2.7-t2v",
      input: { prompt: "rain [[sandbox:video-seconds=0.2]]" },
    });
    await waitForStatus(quick, "SUCCEEDED", 5_000);
    const times = (await waitForStatus(standard, "SUCCEEDED", 10_000)).output;
    expect(ms(times.end_time) - ms(times.submit_time)).toBe(2500);
    expect(ms(times.scheduled_time) - ms(times.submit_time)).toBe(625);
  });

  it("report each version's usage and the prompt rewrite only when prompt_extend is on", async () => {
    const preview = await create({
      model: "wan2.5-t2v-preview",
      input: { prompt: "dunes [[sandbox:video-seconds=0]]" },
      parameters: { size: "480*832", duration: 10, prompt_extend: false },
    });
    const previewOut = await output(preview);
    expect(previewOut.usage).toEqual({
      video_duration: 10,
      video_count: 1,
      SR: 480,
      video_ratio: "480*832",
    });
    expect(previewOut.output.actual_prompt).toBeUndefined();
    expect(previewOut.output.orig_prompt).toBe("dunes [[sandbox:video-seconds=0]]");
    const references = await create({
      model: "wan2.7-r2v",
      input: {
        prompt: "Image 1 dances with Video 1 [[sandbox:video-seconds=0]]",
        media: [
          { type: "reference_image", url: "https://x.example/a.png" },
          { type: "reference_video", url: "https://x.example/b.mp4" },
        ],
      },
      parameters: { resolution: "720P", ratio: "1:1", duration: 4 },
    });
    expect((await output(references)).usage).toEqual({
      duration: 7,
      input_video_duration: 3,
      output_video_duration: 4,
      video_count: 1,
      SR: 720,
      ratio: "1:1",
    });
  });

  it("accept wan2.7-i2v with a 2.6-style img_url, then FAIL it with InvalidParameter", async () => {
    const id = await create({
      model: "wan2.7-i2v",
      input: { prompt: "waves [[sandbox:video-seconds=8]]", img_url: "https://x.example/a.png" },
      parameters: { resolution: "720P", duration: 5 },
    });
    expect((await output(id)).output.task_status).toBe("PENDING");
    await advanceClock(sandbox.url, 3);
    const failed = await poll(id);
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({
      request_id: expect.any(String),
      output: {
        task_id: id,
        task_status: "FAILED",
        submit_time: expect.stringMatching(TIME),
        scheduled_time: expect.stringMatching(TIME),
        end_time: expect.stringMatching(TIME),
        code: "InvalidParameter",
        message: "Field required: input.media",
      },
    });
  });

  it("fail as the faults ask: InternalError, moderation, an unreachable input", async () => {
    const cases: Array<[Json, string, RegExp]> = [
      [
        { prompt: "x [[sandbox:video-seconds=0;video-fail=InternalError]]" },
        "InternalError",
        /internal error/,
      ],
      [
        { prompt: "x [[sandbox:video-seconds=0;video-moderated]]" },
        "DataInspectionFailed",
        /inappropriate/,
      ],
      [
        { prompt: "x [[sandbox:video-seconds=0]]", audio_url: "https://cdn.example.invalid/a.mp3" },
        "InvalidParameter",
        /Failed to download multimodal content/,
      ],
    ];
    for (const [input, code, message] of cases) {
      const body = await output(await create({ model: "wan2.6-t2v", input }));
      expect(body.output).toMatchObject({
        task_status: "FAILED",
        code,
        message: expect.stringMatching(message),
      });
      expect(body.usage).toBeUndefined();
      expect(body.output.video_url).toBeUndefined();
    }
  });

  it("never finish with video-stuck, and read UNKNOWN once 24 hours have passed", async () => {
    const id = await create({
      model: "wan2.6-t2v",
      input: { prompt: "x [[sandbox:video-seconds=1;video-stuck]]" },
    });
    await advanceClock(sandbox.url, 3600);
    expect((await output(id)).output.task_status).toBe("RUNNING");
    await advanceClock(sandbox.url, 23 * 3600);
    expect(await output(id)).toEqual({
      request_id: expect.any(String),
      output: { task_id: id, task_status: "UNKNOWN" },
    });
    expect((await output("no-such-task")).output).toEqual({
      task_id: "no-such-task",
      task_status: "UNKNOWN",
    });
  });

  it("can be cancelled only while PENDING", async () => {
    const id = await create({
      model: "wan2.6-t2v",
      input: { prompt: "x [[sandbox:video-seconds=40]]" },
    });
    const cancelled = await cancel(id);
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toEqual({ request_id: expect.any(String) });
    expect((await output(id)).output).toMatchObject({
      task_status: "CANCELED",
      end_time: expect.stringMatching(TIME),
    });
    const running = await create({
      model: "wan2.6-t2v",
      input: { prompt: "y [[sandbox:video-seconds=40]]" },
    });
    await advanceClock(sandbox.url, 11);
    for (const taskId of [id, running, "no-such-task"]) {
      const refused = await cancel(taskId);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        request_id: expect.any(String),
        code: "UnsupportedOperation",
        message: CANCEL_REFUSED_MESSAGE,
      });
    }
    expect((await output(running)).output.task_status).toBe("RUNNING");
  });

  it("answer 429 Throttling.RateQuota to polls beyond 20 a second per key", async () => {
    const id = await create({ model: "wan2.6-t2v", input: { prompt: "x" } });
    const burst = await Promise.all(
      Array.from({ length: 40 }, () => poll(id, { authorization: "Bearer sk-burst" })),
    );
    const throttled = burst.filter((answer) => answer.status === 429);
    expect(throttled.length).toBeGreaterThanOrEqual(20);
    expect(throttled[0]?.body).toEqual({
      request_id: expect.any(String),
      code: "Throttling.RateQuota",
      message: "Requests rate limit exceeded, please try again later.",
    });
    expect((await poll(id, { authorization: "Bearer sk-other" })).status).toBe(200);
  });

  it("answer 429 to the first polls with video-throttle, or to a poll with a fault header", async () => {
    const id = await create({
      model: "wan2.6-t2v",
      input: { prompt: "x [[sandbox:video-throttle=2]]" },
    });
    expect((await poll(id)).status).toBe(429);
    expect((await poll(id)).status).toBe(429);
    expect((await poll(id)).status).toBe(200);
    const faulted = await poll(id, { "x-sandbox-fault": "status=429;retry-after=3" });
    expect(faulted.status).toBe(429);
    expect(faulted.headers.get("retry-after")).toBe("3");
    expect(faulted.body.code).toBe("Throttling.RateQuota");
  });

  it("link a real MP4 for 24 hours, downloadable without the API key", async () => {
    const body = {
      model: "wan2.7-t2v",
      input: { prompt: "a red kite [[sandbox:video-seconds=0]]" },
      parameters: { resolution: "1080P", ratio: "9:16", duration: 3, seed: 12 },
    };
    const done = await output(await create(body));
    const url = done.output.video_url as string;
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("video/mp4");
    const bytes = new Uint8Array(await download.arrayBuffer());
    const mp4 = readMp4(bytes);
    expect([mp4.width, mp4.height, mp4.movieDurationSeconds, mp4.samples.length]).toEqual([
      180, 320, 3, 3,
    ]);
    const again = (await output(await create(body))).output.video_url as string;
    expect(new URL(again).pathname).toBe(new URL(url).pathname);
    expect((await fetch(url, { headers: { authorization: KEY } })).status).toBe(400);
    await advanceClock(sandbox.url, 24 * 3600 + 1);
    expect((await fetch(url)).status).toBe(403);
  });

  it("log each request with its body unchanged", async () => {
    const body = {
      model: "wan2.7-i2v",
      input: { prompt: "a cat", media: [{ type: "first_frame", url: "https://x.example/c.png" }] },
      parameters: {
        resolution: "720P",
        duration: 6,
        prompt_extend: false,
        watermark: true,
        seed: 9,
      },
    };
    const id = await create(body);
    await poll(id);
    await cancel(id);
    const log = (await (await fetch(`${sandbox.url}/__sandbox/requests?limit=3`)).json()) as {
      requests: Array<{ method: string; path: string; body: unknown; headers: Json }>;
    };
    expect(log.requests.map((entry) => [entry.method, entry.path])).toEqual([
      ["POST", VIDEO_SYNTHESIS_PATH],
      ["GET", `${TASKS_PATH}/${id}`],
      ["POST", `${TASKS_PATH}/${id}/cancel`],
    ]);
    expect(log.requests[0]?.body).toEqual(body);
    expect(log.requests[0]?.headers["x-dashscope-async"]).toBe("enable");
  });
});
