/**
 * The sandbox's non-chat vendor emulations (Gemini embeddings, DashScope Qwen-Image / Wan /
 * Qwen3-TTS) held to the vendors' documented rules, and what the gateway sends them. Each test
 * states the vendor's behaviour and failed before its fix: the sandbox accepted a request the
 * vendor refuses, or the gateway sent one upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../src/sandbox/server.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { pngBytes } from "./support/image-fixtures.ts";

const MULTIMODAL = "/dashscope/api/v1/services/aigc/multimodal-generation/generation";
const VIDEO_SYNTHESIS = "/dashscope/api/v1/services/aigc/video-generation/video-synthesis";
/** the protocol reference, §2: the fixed size set of qwen-image, -plus, -max (1472*1140 pair also accepted). */
const QWEN_IMAGE_FIXED_SIZES = [
  "1664*928",
  "1472*1104",
  "1328*1328",
  "1104*1472",
  "928*1664",
  "1472*1140",
  "1140*1472",
];

function qwenImage(model: string, parameters: Record<string, unknown>, images: string[] = []) {
  return {
    model,
    input: {
      messages: [
        { role: "user", content: [...images.map((image) => ({ image })), { text: "a red fox" }] },
      ],
    },
    parameters,
  };
}

const pngDataUri = (width: number, height: number) =>
  `data:image/png;base64,${pngBytes(width, height).toString("base64")}`;

describe("sandbox vendors, hostile: what the vendor refuses", () => {
  let sandbox: RunningSandbox;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${sandbox.url}${path}`, {
      method: "POST",
      headers: {
        authorization: "Bearer sk-sandbox",
        "content-type": "application/json",
        ...headers,
      },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox.close());

  it("Qwen-Image: qwen-image / -plus / -max refuse sizes outside their fixed set with 400 InvalidParameter", async () => {
    // the protocol reference, §2: "`qwen-image`, `-plus`, `-max`: fixed set `1664*928` (16:9),
    // `1472*1104` (4:3), `1328*1328` (1:1, default), `1104*1472` (3:4), `928*1664` (9:16)";
    // "Invalid size or field → 400 `InvalidParameter`".
    const sane = await post(MULTIMODAL, qwenImage("qwen-image-plus", { size: "1328*1328" }));
    expect(sane.status).toBe(200);
    for (const model of ["qwen-image", "qwen-image-plus", "qwen-image-max"]) {
      for (const size of ["1024*1024", "1280*720", "512*512"]) {
        const response = await post(MULTIMODAL, qwenImage(model, { size }));
        const body = (await response.json()) as { code?: string };
        expect({ model, size, status: response.status, code: body.code }).toEqual({
          model,
          size,
          status: 400,
          code: "InvalidParameter",
        });
      }
    }
  });

  it("Qwen-Image 2.0: a size below 512×512 total pixels is refused with 400 InvalidParameter", async () => {
    // the protocol reference, §2: "`qwen-image-2.0` / `-2.0-pro`: any W*H with total pixels
    // between 512×512 and 2048×2048".
    for (const size of ["256*256", "400*400", "256*1000"]) {
      const response = await post(MULTIMODAL, qwenImage("qwen-image-2.0", { size }));
      const body = (await response.json()) as { code?: string };
      expect({ size, status: response.status, code: body.code }).toEqual({
        size,
        status: 400,
        code: "InvalidParameter",
      });
    }
  });

  it("Qwen-Image edit-plus: `size` is refused with n>1, and sides outside 512–2048 are refused", async () => {
    // the protocol reference, §2: "`qwen-image-edit-plus`: `n` 1–6; `size` only allowed when
    // `n`=1 (width/height each 512–2048)"; "`size` + `n>1` rejected on edit-plus" (§2 checklist).
    const ref = ["https://example.com/in.png"];
    const withN = await post(
      MULTIMODAL,
      qwenImage("qwen-image-edit-plus", { size: "1024*1024", n: 2 }, ref),
    );
    expect(withN.status).toBe(400);
    const small = await post(
      MULTIMODAL,
      qwenImage("qwen-image-edit-plus", { size: "300*300", n: 1 }, ref),
    );
    expect(small.status).toBe(400);
  });

  it("DashScope sync endpoints (Qwen-Image, Qwen3-TTS) refuse `X-DashScope-Async: enable` with 403", async () => {
    // the protocol reference, §1 Headers: "Sending it to a sync-only service ... gives `current
    // user api does not support asynchronous calls` with HTTP 403"; §2 "(no async header; a sync
    // call ...)", §4 "Synchronous".
    const async = { "x-dashscope-async": "enable" };
    const image = await post(MULTIMODAL, qwenImage("qwen-image-plus", {}), async);
    const tts = await post(
      MULTIMODAL,
      { model: "qwen3-tts-flash", input: { text: "Hello there.", voice: "Cherry" } },
      async,
    );
    for (const response of [image, tts]) {
      const body = (await response.json()) as { code?: string; message?: string };
      expect(response.status).toBe(403);
      expect(body.message).toBe("current user api does not support asynchronous calls");
    }
  });

  it("Wan: inline images outside the model's pixel limits are refused (2.7 first_frame 240–8000 px, 2.5 img_url 360–2000 px)", async () => {
    // the protocol reference, §3.3: wan2.7-i2v "Limits: images ... 240–8000 px per side, aspect
    // 1:8–8:1"; §3.1: wan2.5-i2v "img_url (URL or data URI; 360–2000 px)".
    const headers = { "x-dashscope-async": "enable" };
    const tiny = await post(
      VIDEO_SYNTHESIS,
      {
        model: "wan2.7-i2v",
        input: { prompt: "waves", media: [{ type: "first_frame", url: pngDataUri(100, 100) }] },
        parameters: { resolution: "720P", duration: 5 },
      },
      headers,
    );
    const skinny = await post(
      VIDEO_SYNTHESIS,
      {
        model: "wan2.7-i2v",
        input: { prompt: "waves", media: [{ type: "first_frame", url: pngDataUri(2400, 250) }] },
        parameters: { resolution: "720P", duration: 5 },
      },
      headers,
    );
    const old = await post(
      VIDEO_SYNTHESIS,
      {
        model: "wan2.5-i2v-preview",
        input: { prompt: "waves", img_url: pngDataUri(200, 200) },
        parameters: { resolution: "720P", duration: 5 },
      },
      headers,
    );
    const statuses = [tiny.status, skinny.status, old.status];
    expect(statuses).toEqual([400, 400, 400]);
  });

  it("Gemini embedContent: `title` with a taskType other than RETRIEVAL_DOCUMENT is refused with 400 INVALID_ARGUMENT", async () => {
    // the protocol reference, §7: `"title": "optional, only with RETRIEVAL_DOCUMENT"`; Google error
    // envelope `{"error": {"code": 400, ..., "status": "INVALID_ARGUMENT"}}`.
    const response = await post(
      "/gemini/v1beta/models/gemini-embedding-001:embedContent",
      {
        model: "models/gemini-embedding-001",
        content: { parts: [{ text: "Hello" }] },
        taskType: "RETRIEVAL_QUERY",
        title: "A title",
      },
      { "x-goog-api-key": "sandbox" },
    );
    const body = (await response.json()) as { error?: { status?: string } };
    expect(response.status).toBe(400);
    expect(body.error?.status).toBe("INVALID_ARGUMENT");
  });
});

describe("sandbox vendors, hostile: what the gateway sends upstream", () => {
  let gateway: TestGateway;
  let key: string;
  const sandboxRequests = async () => {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
    return ((await response.json()) as { requests: { path: string; body: unknown }[] }).requests;
  };

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { tasks: { tick_ms: 20, poll_min_interval_ms: 20 } },
    });
    key = (await createUser(gateway, { balanceMicros: 20_000_000 })).key;
  });
  afterAll(() => gateway.close());

  it("pictor-image-max sends qwen-image-max only sizes from its fixed set (default and catalog sizes)", async () => {
    // the protocol reference, §2: qwen-image-max takes only `1664*928`, `1472*1104`, `1328*1328`,
    // `1104*1472`, `928*1664` (+ the 1472*1140 pair). The gateway defaults to `1024*1024` and its
    // catalog lists `1024*1024`, `1280*720`, `720*1280`: production answers 400 InvalidParameter.
    const sent: string[] = [];
    for (const parameters of [undefined, { size: "1280*720" }]) {
      const response = await gateway.request("/v1/images/generations", {
        key,
        json: {
          model: "pictor-image-max",
          input: { messages: [{ role: "user", content: [{ text: "a red fox" }] }] },
          ...(parameters ? { parameters } : {}),
        },
      });
      if (response.status !== 200) continue; // refused by the gateway itself: fine
      const upstream = (await sandboxRequests()).findLast((entry) =>
        entry.path.endsWith("/multimodal-generation/generation"),
      );
      const body = upstream?.body as { model: string; parameters?: { size?: string } };
      expect(body.model).toBe("qwen-image-max");
      sent.push(body.parameters?.size ?? "(vendor default)");
    }
    for (const size of sent) {
      if (size !== "(vendor default)") expect(QWEN_IMAGE_FIXED_SIZES).toContain(size);
    }
  });

  it("motion2.7-t2v forwards the requested aspect_ratio as Wan 2.7's `parameters.ratio`", async () => {
    // the protocol reference, §3.3: wan2.7-t2v `parameters{resolution, ratio: "16:9"|"9:16"|...
    // (default 16:9)}`. The gateway checks and bills `aspect_ratio` but sends only `resolution`,
    // so the vendor makes a 16:9 video for a 9:16 request.
    const response = await gateway.request("/v1/videos/generations", {
      key,
      json: {
        model: "motion2.7-t2v",
        duration: 5,
        resolution: "720p",
        aspect_ratio: "9:16",
        input: { prompt: "a tall lighthouse [[sandbox:video-seconds=1]]" },
      },
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const upstream = (await sandboxRequests()).findLast((entry) =>
      entry.path.endsWith("/video-generation/video-synthesis"),
    );
    const body = upstream?.body as { model: string; parameters?: Record<string, unknown> };
    expect(body.model).toBe("wan2.7-t2v");
    expect(body.parameters?.ratio).toBe("9:16");
  });
});
