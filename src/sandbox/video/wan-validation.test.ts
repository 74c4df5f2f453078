/**
 * DashScope's Wan video-synthesis endpoint over real HTTP, before any task exists: the async
 * header, the key, and each model version's request rules (protocol reference §3.1–§3.3), with
 * the vendor's `{request_id, code, message}` bodies. Every model the catalog routes to is
 * accepted with a minimal request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../server.ts";
import { VIDEO_SYNTHESIS_PATH } from "./wan-routes.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

const ASYNC_HEADERS = {
  authorization: "Bearer sk-sandbox",
  "content-type": "application/json",
  "x-dashscope-async": "enable",
};

async function create(body: unknown, headers: Record<string, string> = ASYNC_HEADERS) {
  const response = await fetch(`${sandbox.url}${VIDEO_SYNTHESIS_PATH}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const IMAGE = "https://img.example.com/first.png";
const VIDEO = "https://img.example.com/clip.mp4";
const AUDIO = "https://img.example.com/voice.mp3";

describe("Wan video synthesis: headers and key", () => {
  it("refuses a synchronous call with 403 AccessDenied", async () => {
    const body = { model: "wan2.6-t2v", input: { prompt: "a fox" } };
    const { "x-dashscope-async": _, ...withoutAsync } = ASYNC_HEADERS;
    for (const headers of [withoutAsync, { ...ASYNC_HEADERS, "x-dashscope-async": "disable" }]) {
      const refused = await create(body, headers);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        code: "AccessDenied",
        message: "current user api does not support synchronous calls",
      });
    }
  });

  it("refuses a missing key with 401 InvalidApiKey", async () => {
    const refused = await create(
      { model: "wan2.6-t2v", input: { prompt: "a fox" } },
      { "content-type": "application/json", "x-dashscope-async": "enable" },
    );
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: "InvalidApiKey" });
  });

  it("answers body errors in DashScope's envelope", async () => {
    const broken = await create("{not json");
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: "InvalidParameter", request_id: expect.any(String) });
    expect((await create({ input: { prompt: "x" } })).body).toMatchObject({
      code: "BadRequest.EmptyModel",
    });
    expect((await create({ model: "wan2.6-t2v" })).body).toMatchObject({
      code: "BadRequest.EmptyInput",
    });
    const unknown = await create({ model: "wan2.7-videoedit", input: { prompt: "x" } });
    expect(unknown).toEqual({
      status: 400,
      body: expect.objectContaining({ code: "InvalidParameter", message: "Model not exist." }),
    });
  });
});

describe("Wan video synthesis: what each version accepts", () => {
  const accepted: Array<[string, Record<string, unknown>, Record<string, unknown>?]> = [
    ["wan2.5-t2v-preview", { prompt: "a fox" }, { size: "832*480", duration: 10 }],
    ["wan2.5-i2v-preview", { img_url: IMAGE }, { resolution: "480P", duration: 5 }],
    ["wan2.6-t2v", { prompt: "a fox", audio_url: AUDIO }, { size: "1280*720", duration: 15 }],
    ["wan2.6-i2v", { prompt: "a fox", img_url: IMAGE }, { resolution: "720P", duration: 2 }],
    ["wan2.6-i2v-flash", { img_url: IMAGE }, { audio: false, shot_type: "multi" }],
    [
      "wan2.6-r2v",
      { prompt: "character1 waves", reference_urls: [IMAGE, VIDEO] },
      { duration: 10 },
    ],
    ["wan2.6-r2v-flash", { prompt: "character1 waves", reference_urls: [IMAGE] }],
    ["wan2.7-t2v", { prompt: "a fox" }, { resolution: "720P", ratio: "3:4", duration: 2 }],
    ["wan2.7-t2v-2026-04-25", { prompt: "a fox" }],
    ["wan2.7-i2v", { media: [{ type: "first_frame", url: IMAGE }] }],
    [
      "wan2.7-i2v-2026-04-25",
      {
        media: [
          { type: "first_frame", url: IMAGE },
          { type: "last_frame", url: IMAGE },
          { type: "driving_audio", url: AUDIO },
        ],
      },
    ],
    [
      "wan2.7-i2v",
      {
        media: [
          { type: "first_clip", url: VIDEO },
          { type: "last_frame", url: IMAGE },
        ],
      },
    ],
    [
      "wan2.7-r2v",
      {
        prompt: "Image 1 meets Video 1",
        media: [
          { type: "reference_image", url: IMAGE, reference_voice: AUDIO },
          { type: "reference_video", url: VIDEO },
          { type: "first_frame", url: IMAGE },
        ],
      },
      { duration: 10 },
    ],
  ];
  for (const [model, input, parameters] of accepted) {
    it(`accepts ${model} ${JSON.stringify(parameters ?? {})}`, async () => {
      const answer = await create({ model, input, ...(parameters ? { parameters } : {}) });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        output: { task_id: expect.stringMatching(/^[0-9a-f-]{36}$/), task_status: "PENDING" },
        request_id: expect.any(String),
      });
    });
  }

  const refused: Array<[string, Record<string, unknown>, Record<string, unknown>, RegExp]> = [
    ["wan2.5-t2v-preview", { prompt: "x" }, { size: "1280x720" }, /parameters\.size$/],
    ["wan2.5-t2v-preview", { prompt: "x" }, { duration: 7 }, /^Input should be 5 or 10/],
    ["wan2.5-t2v-preview", { prompt: "x".repeat(2001) }, {}, /at most 2000 .*input\.prompt$/],
    ["wan2.5-t2v-preview", {}, {}, /^Field required: input\.prompt$/],
    ["wan2.5-i2v-preview", { prompt: "x" }, {}, /^Field required: input\.img_url$/],
    ["wan2.5-i2v-preview", { img_url: IMAGE }, { resolution: "720p" }, /parameters\.resolution$/],
    ["wan2.5-i2v-preview", { img_url: "ftp://x/y.png" }, {}, /url error.*input\.img_url$/],
    ["wan2.6-t2v", { prompt: "x" }, { size: "832*480" }, /parameters\.size$/],
    ["wan2.6-t2v", { prompt: "x" }, { duration: 16 }, /between 2 and 15: parameters\.duration$/],
    ["wan2.6-t2v", { prompt: "x" }, { duration: 1 }, /parameters\.duration$/],
    ["wan2.6-t2v", { prompt: "x" }, { duration: 5.5 }, /valid integer: parameters\.duration$/],
    [
      "wan2.6-t2v",
      { prompt: "x" },
      { shot_type: "multi", prompt_extend: false },
      /requires prompt_extend.*parameters\.shot_type$/,
    ],
    ["wan2.6-t2v", { prompt: "x" }, { seed: -1 }, /parameters\.seed$/],
    ["wan2.6-t2v", { prompt: "x", negative_prompt: "n".repeat(501) }, {}, /negative_prompt$/],
    ["wan2.6-i2v", { img_url: IMAGE }, { resolution: "480P" }, /parameters\.resolution$/],
    ["wan2.6-i2v", { media: [{ type: "first_frame", url: IMAGE }] }, {}, /input\.img_url$/],
    ["wan2.6-r2v", { prompt: "x" }, {}, /^Field required: input\.reference_urls$/],
    ["wan2.6-r2v", { prompt: "x", reference_urls: [IMAGE] }, { duration: 11 }, /duration$/],
    ["wan2.7-t2v", { prompt: "x" }, { resolution: "480P" }, /parameters\.resolution$/],
    ["wan2.7-t2v", { prompt: "x" }, { ratio: "21:9" }, /parameters\.ratio$/],
    ["wan2.7-t2v", { prompt: "x" }, { duration: 16 }, /parameters\.duration$/],
    ["wan2.7-t2v", { prompt: "x".repeat(5001) }, {}, /at most 5000/],
    ["wan2.7-i2v", { media: [] }, {}, /at least 1 item: input\.media$/],
    [
      "wan2.7-i2v",
      { media: [{ type: "last_frame", url: IMAGE }] },
      {},
      /combination.*input\.media$/,
    ],
    [
      "wan2.7-i2v",
      {
        media: [
          { type: "first_frame", url: IMAGE },
          { type: "first_clip", url: VIDEO },
        ],
      },
      {},
      /combination/,
    ],
    [
      "wan2.7-i2v",
      {
        media: [
          { type: "first_frame", url: IMAGE },
          { type: "first_frame", url: IMAGE },
        ],
      },
      {},
      /combination/,
    ],
    ["wan2.7-i2v", { media: [{ type: "reference_image", url: IMAGE }] }, {}, /media\.0\.type$/],
    [
      "wan2.7-i2v",
      { media: [{ type: "first_frame" }] },
      {},
      /^Field required: input\.media\.0\.url$/,
    ],
    ["wan2.7-r2v", { prompt: "x" }, {}, /^Input should be a valid list: input\.media$/],
    [
      "wan2.7-r2v",
      {
        prompt: "x",
        media: Array.from({ length: 6 }, () => ({ type: "reference_image", url: IMAGE })),
      },
      {},
      /At most 5 reference_image and reference_video/,
    ],
    [
      "wan2.7-r2v",
      { prompt: "x", media: [{ type: "first_frame", url: IMAGE }] },
      {},
      /At least one reference/,
    ],
    [
      "wan2.7-r2v",
      {
        prompt: "x",
        media: [
          { type: "reference_image", url: IMAGE },
          { type: "first_frame", url: IMAGE },
          { type: "first_frame", url: IMAGE },
        ],
      },
      {},
      /At most one first_frame/,
    ],
    [
      "wan2.7-r2v",
      { prompt: "x", media: [{ type: "reference_video", url: VIDEO }] },
      { duration: 12 },
      /between 2 and 10: parameters\.duration$/,
    ],
    [
      "wan2.7-r2v",
      { prompt: "x", media: [{ type: "reference_video", url: VIDEO, reference_voice: AUDIO }] },
      {},
      /reference_voice is only allowed on reference_image/,
    ],
  ];
  for (const [model, input, parameters, message] of refused) {
    it(`refuses ${model} ${JSON.stringify({ input, parameters }).slice(0, 90)}`, async () => {
      const answer = await create({ model, input, parameters });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        request_id: expect.any(String),
        code: "InvalidParameter",
        message: expect.stringMatching(message),
      });
    });
  }
});
