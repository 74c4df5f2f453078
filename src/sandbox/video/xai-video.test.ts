/**
 * xAI's deferred video API over real HTTP (protocol reference §9): the refusals with xAI's
 * `{code, error}` body (a bare-string `image` among them), pending with progress → done with
 * the video and its cost, failed, the moderated output (`respect_moderation: false`, no url),
 * expired after 24 hours, 429 on polling, the MP4 behind the link, and the request log.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../server.ts";
import { advanceClock, readMp4 } from "./video-test-kit.ts";
import { XAI_GENERATIONS_PATH, XAI_VIDEOS_PATH } from "./xai-routes.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

type Json = Record<string, unknown>;

interface VideoAnswer {
  request_id: string;
  status?: string;
  progress?: number;
  video?: { url?: string; duration: number; respect_moderation: boolean };
}
const HEADERS = { authorization: "Bearer xai-sandbox", "content-type": "application/json" };
const IMAGE = { url: "https://img.example.com/start.jpg" };
const INVALID_ARGUMENT = "Client specified an invalid argument";

async function submit(body: Json, headers: Record<string, string> = HEADERS) {
  const response = await fetch(`${sandbox.url}${XAI_GENERATIONS_PATH}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as VideoAnswer };
}

async function requestId(body: Json): Promise<string> {
  const answer = await submit(body);
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  return answer.body.request_id;
}

async function poll(id: string) {
  const response = await fetch(`${sandbox.url}${XAI_VIDEOS_PATH}/${id}`, {
    headers: { authorization: HEADERS.authorization },
  });
  return { status: response.status, body: (await response.json()) as VideoAnswer };
}

describe("xAI video generations: refusals", () => {
  const refused: Array<[string, Json, RegExp]> = [
    [
      "a bare-string image",
      { model: "grok-imagine-video", prompt: "p", image: IMAGE.url },
      /^image: invalid type: string/,
    ],
    ["an image without url", { model: "grok-imagine-video", prompt: "p", image: {} }, /image\.url/],
    [
      "image with reference_images",
      { model: "grok-imagine-video", prompt: "p", image: IMAGE, reference_images: [IMAGE] },
      /cannot be used together/,
    ],
    [
      "eight reference images",
      { model: "grok-imagine-video", prompt: "p", reference_images: Array(8).fill(IMAGE) },
      /1 to 7 items: reference_images/,
    ],
    [
      "a bare-string reference image",
      { model: "grok-imagine-video", prompt: "p", reference_images: ["x"] },
      /reference_images\.0/,
    ],
    [
      "duration 0",
      { model: "grok-imagine-video", prompt: "p", duration: 0 },
      /between 1 and 15: duration/,
    ],
    ["duration 16", { model: "grok-imagine-video", prompt: "p", duration: 16 }, /duration$/],
    [
      "1080p on the base model",
      { model: "grok-imagine-video", prompt: "p", resolution: "1080p" },
      /resolution$/,
    ],
    [
      "an upper-case resolution",
      { model: "grok-imagine-video", prompt: "p", resolution: "720P" },
      /resolution$/,
    ],
    [
      "an unknown aspect ratio",
      { model: "grok-imagine-video", prompt: "p", aspect_ratio: "21:9" },
      /aspect_ratio$/,
    ],
    ["no prompt", { model: "grok-imagine-video" }, /^Field required: prompt$/],
    [
      "a prompt over 4096 bytes",
      { model: "grok-imagine-video", prompt: "é".repeat(2049) },
      /4096 bytes/,
    ],
    [
      "text-to-video on a 1.5 model",
      { model: "grok-imagine-video-1.5-preview", prompt: "p" },
      /image is required/,
    ],
  ];
  for (const [what, body, message] of refused) {
    it(`refuses ${what}`, async () => {
      expect(await submit(body)).toEqual({
        status: 400,
        body: { code: INVALID_ARGUMENT, error: expect.stringMatching(message) },
      });
    });
  }

  it("refuses an unknown model with 404 and a missing key with 400", async () => {
    expect(await submit({ model: "grok-imagine-video-9", prompt: "p" })).toEqual({
      status: 404,
      body: {
        code: "Some requested entity was not found",
        error: expect.stringMatching(/does not exist/),
      },
    });
    const keyless = await submit(
      { model: "grok-imagine-video", prompt: "p" },
      { "content-type": "application/json" },
    );
    expect(keyless).toEqual({
      status: 400,
      body: { code: INVALID_ARGUMENT, error: expect.stringMatching(/API key/) },
    });
    expect((await poll("no-such-request")).status).toBe(404);
  });

  it("accepts image-to-video on every model, 1080p on the 1.5 models", async () => {
    for (const model of [
      "grok-imagine-video",
      "grok-imagine-video-1.5",
      "grok-imagine-video-1.5-preview",
    ]) {
      await requestId({
        model,
        prompt: "slow dolly-in",
        image: IMAGE,
        duration: 8,
        resolution: "720p",
      });
    }
    await requestId({
      model: "grok-imagine-video-1.5",
      prompt: "p",
      image: IMAGE,
      resolution: "1080p",
    });
    await requestId({ model: "grok-imagine-video", prompt: "p", reference_images: [IMAGE, IMAGE] });
  });
});

describe("xAI video generations: the deferred request", () => {
  it("is pending with progress, then done with the video and its cost", async () => {
    const id = await requestId({
      model: "grok-imagine-video",
      prompt: "a paper boat [[sandbox:video-seconds=40]]",
      duration: 5,
      resolution: "720p",
      aspect_ratio: "4:3",
    });
    expect((await poll(id)).body).toEqual({
      status: "pending",
      progress: 0,
      model: "grok-imagine-video",
    });
    await advanceClock(sandbox.url, 25);
    const halfway = (await poll(id)).body;
    expect(halfway).toMatchObject({ status: "pending", model: "grok-imagine-video" });
    expect(halfway.progress).toBe(50);
    await advanceClock(sandbox.url, 15);
    const done = await poll(id);
    expect(done).toEqual({
      status: 200,
      body: {
        status: "done",
        video: {
          url: expect.stringContaining("/__results/video/vid-256x192-5s-"),
          duration: 5,
          respect_moderation: true,
        },
        model: "grok-imagine-video",
        usage: { cost_in_usd_ticks: 3_500_000_000 },
        progress: 100,
      },
    });
    const url = String(done.body.video?.url);
    const download = await fetch(url);
    expect(download.headers.get("content-type")).toBe("video/mp4");
    const mp4 = readMp4(new Uint8Array(await download.arrayBuffer()));
    expect([mp4.width, mp4.height, mp4.movieDurationSeconds]).toEqual([256, 192, 5]);
    await advanceClock(sandbox.url, 3601);
    expect((await fetch(url)).status).toBe(403);
  });

  it("fails as video-fail asks, and is blocked as video-moderated asks", async () => {
    const failed = await requestId({
      model: "grok-imagine-video",
      prompt: "p [[sandbox:video-seconds=0;video-fail=internal_error]]",
    });
    expect((await poll(failed)).body).toEqual({
      status: "failed",
      error: { code: "internal_error", message: expect.any(String) },
      model: "grok-imagine-video",
    });
    const blocked = await requestId({
      model: "grok-imagine-video",
      prompt: "p [[sandbox:video-seconds=0;video-moderated]]",
      duration: 3,
    });
    const answer = (await poll(blocked)).body;
    expect(answer).toEqual({
      status: "done",
      video: { duration: 3, respect_moderation: false },
      model: "grok-imagine-video",
      usage: { cost_in_usd_ticks: 0 },
      progress: 100,
    });
    expect(answer.video?.url).toBeUndefined();
  });

  it("fails when its image cannot be fetched", async () => {
    const id = await requestId({
      model: "grok-imagine-video-1.5",
      prompt: "p [[sandbox:video-seconds=0]]",
      image: { url: "https://cdn.example.invalid/a.jpg" },
    });
    expect((await poll(id)).body).toMatchObject({
      status: "failed",
      error: { code: "invalid_argument" },
    });
  });

  it("is expired after 24 hours", async () => {
    const id = await requestId({
      model: "grok-imagine-video",
      prompt: "p [[sandbox:video-seconds=0]]",
    });
    expect((await poll(id)).body.status).toBe("done");
    await advanceClock(sandbox.url, 24 * 3600);
    expect(await poll(id)).toEqual({
      status: 200,
      body: { status: "expired", model: "grok-imagine-video" },
    });
  });

  it("answers 429 to the first polls with video-throttle", async () => {
    const id = await requestId({
      model: "grok-imagine-video",
      prompt: "p [[sandbox:video-throttle=1]]",
    });
    expect(await poll(id)).toEqual({
      status: 429,
      body: { code: "Some resource has been exhausted", error: expect.any(String) },
    });
    expect((await poll(id)).status).toBe(200);
  });

  it("is logged with its body unchanged", async () => {
    const body = {
      model: "grok-imagine-video-1.5-preview",
      prompt: "p",
      image: IMAGE,
      duration: 8,
      aspect_ratio: "16:9",
      resolution: "720p",
    };
    const id = await requestId(body);
    await poll(id);
    const log = (await (await fetch(`${sandbox.url}/__sandbox/requests?limit=2`)).json()) as {
      requests: Array<{ method: string; path: string; body: unknown }>;
    };
    expect(log.requests.map((entry) => [entry.method, entry.path])).toEqual([
      ["POST", XAI_GENERATIONS_PATH],
      ["GET", `${XAI_VIDEOS_PATH}/${id}`],
    ]);
    expect(log.requests[0]?.body).toEqual(body);
  });
});
