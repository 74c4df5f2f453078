/**
 * `POST /v1/images/generations` for the `pictor` family (spec 2.3, section 7): every 400 in the
 * provider dialect before anything goes upstream, the exact response, the image behind the
 * returned link (decoded to the requested size), link expiry, upstream faults and billing.
 */
import { createHmac } from "node:crypto";
import { PNG } from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const PATH = "/v1/images/generations";
const REF = "https://example.com/reference.png";

function pictor(model: string, content: Record<string, string>[], parameters?: object) {
  return {
    model,
    input: { messages: [{ role: "user", content }] },
    ...(parameters ? { parameters } : {}),
  };
}

async function expectProviderError(response: Response, status: number, code: string) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["code", "error", "message", "request_id"]);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe("string");
  expect(body.request_id).toBe(response.headers.get("x-request-id"));
  // The same code and message in an OpenAI-style `error` object, for the official SDKs.
  expect(body.error).toEqual({ message: body.message, type: expect.any(String), code });
  return body as { code: string; message: string; request_id: string };
}

describe("pictor image generation", () => {
  let gateway: TestGateway;
  let key: string;
  const sandboxRequests = async () => {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
    return ((await response.json()) as { requests: { path: string; body: unknown }[] }).requests;
  };
  const post = (json: unknown, withKey = key) => gateway.request(PATH, { key: withKey, json });
  /** Moves the sandbox result host's clock forward (it runs in its own thread). */
  const advanceSandboxClock = async (seconds: number) => {
    const response = await fetch(`${gateway.sandboxUrl}/__sandbox/clock`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ advance_seconds: seconds }),
    });
    expect(response.status).toBe(200);
  };

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway)).key;
  });
  afterAll(() => gateway.close());

  const invalid: [string, unknown, RegExp][] = [
    [
      "an editing model without image blocks",
      pictor("pictor-image-edit", [{ text: "x" }]),
      /1 to 3 image blocks/,
    ],
    [
      "an editing model with four image blocks",
      pictor("pictor-image-edit-plus", [
        { image: REF },
        { image: REF },
        { image: REF },
        { image: REF },
        { text: "x" },
      ]),
      /got 4/,
    ],
    ["an unknown model", pictor("pictor-image-9", [{ text: "x" }]), /pictor-image-9/],
    [
      "an unsupported size",
      pictor("pictor-image-2.0", [{ text: "x" }], { size: "1000*1000" }),
      /parameters.size/,
    ],
    [
      "a size with x",
      pictor("pictor-image-max", [{ text: "x" }], { size: "1024x1024" }),
      /parameters.size/,
    ],
    ["n of 2", pictor("pictor-image-2.0", [{ text: "x" }], { n: 2 }), /'parameters.n': must be 1/],
    [
      "two messages",
      {
        model: "pictor-image-2.0",
        input: {
          messages: [
            { role: "user", content: [{ text: "a" }] },
            { role: "user", content: [{ text: "b" }] },
          ],
        },
      },
      /exactly one message/,
    ],
    [
      "a message from the assistant",
      {
        model: "pictor-image-2.0",
        input: { messages: [{ role: "assistant", content: [{ text: "a" }] }] },
      },
      /must be 'user'/,
    ],
    ["no text block", pictor("pictor-image-edit", [{ image: REF }]), /at least one block with/],
    [
      "a block with text and image",
      pictor("pictor-image-edit", [{ text: "x", image: REF }]),
      /both text and image/,
    ],
    ["an empty block", pictor("pictor-image-2.0", [{ text: "x" }, {}]), /neither text nor image/],
    [
      "a text-to-image model with an image",
      pictor("pictor-image-2.0", [{ image: REF }, { text: "x" }]),
      /takes no image blocks/,
    ],
    [
      "a reference image over http",
      pictor("pictor-image-edit", [{ image: "http://example.com/a.png" }, { text: "x" }]),
      /https URL/,
    ],
    ["a missing input", { model: "pictor-image-2.0" }, /input/],
    [
      "an unknown parameter",
      pictor("pictor-image-2.0", [{ text: "x" }], { style: "anime" }),
      /style/,
    ],
    ["a missing model", { input: { messages: [] } }, /model/],
  ];

  it.each(invalid)(
    "answers 400 InvalidParameter (provider style) to %s",
    async (_name, body, message) => {
      const before = (await sandboxRequests()).length;
      const error = await expectProviderError(await post(body), 400, "InvalidParameter");
      expect(error.message).toMatch(message);
      expect((await sandboxRequests()).length).toBe(before);
    },
  );

  it("answers spec 2.3 exactly, and the link serves a PNG of the requested size", async () => {
    const response = await post(
      pictor("pictor-image-2.0", [{ text: "a lighthouse at dusk" }], {
        size: "1664*928",
        seed: 42,
        watermark: true,
        negative_prompt: "blurry",
        prompt_extend: false,
      }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      request_id: string;
      output: {
        choices: {
          finish_reason: string;
          message: { role: string; content: { image: string }[] };
        }[];
      };
      usage: Record<string, number>;
    };
    expect(Object.keys(body)).toEqual(["request_id", "output", "usage"]);
    expect(body.request_id).toBe(response.headers.get("x-request-id"));
    expect(body.usage).toEqual({ image_count: 1, height: 928, width: 1664 });
    const [choice] = body.output.choices;
    expect(choice?.finish_reason).toBe("stop");
    expect(choice?.message.role).toBe("assistant");
    const url = choice?.message.content[0]?.image ?? "";
    const link = new URL(url);
    const expires = Number(link.searchParams.get("Expires"));
    expect(expires - Date.now() / 1000).toBeGreaterThan(24 * 3600 - 60);
    expect(expires - Date.now() / 1000).toBeLessThanOrEqual(24 * 3600);

    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/png");
    const png = PNG.sync.read(Buffer.from(await download.arrayBuffer()));
    expect([png.width, png.height]).toEqual([1664, 928]);

    // The other parameters reached the upstream, in its own protocol.
    const upstream = (await sandboxRequests())
      .filter((entry) => entry.path.endsWith("/multimodal-generation/generation"))
      .at(-1);
    expect(upstream?.body).toEqual({
      model: "qwen-image-2.0",
      input: { messages: [{ role: "user", content: [{ text: "a lighthouse at dusk" }] }] },
      parameters: {
        size: "1664*928",
        n: 1,
        seed: 42,
        watermark: true,
        negative_prompt: "blurry",
        prompt_extend: false,
      },
    });
  });

  it("defaults to 1024*1024, passes reference images for editing models, and bills per image", async () => {
    const response = await post(
      pictor("pictor-image-edit", [{ image: REF }, { text: "make it purple" }]),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-cost-micros")).toBe("45000");
    const body = (await response.json()) as { usage: Record<string, number> };
    expect(body.usage).toEqual({ image_count: 1, height: 1024, width: 1024 });
    const upstream = (await sandboxRequests()).at(-1)?.body as {
      input: unknown;
      parameters: unknown;
    };
    expect(upstream.input).toEqual({
      messages: [{ role: "user", content: [{ image: REF }, { text: "make it purple" }] }],
    });
    // Spec 2.3: `watermark` defaults to false, sent as such whatever the vendor's default.
    expect(upstream.parameters).toEqual({ size: "1024*1024", n: 1, watermark: false });
  });

  it("is deterministic in prompt and seed", async () => {
    const body = pictor("pictor-image-max", [{ text: "same" }], { seed: 7 });
    const first = (await (await post(body)).json()) as {
      output: { choices: { message: { content: { image: string }[] } }[] };
    };
    const second = (await (await post(body)).json()) as typeof first;
    const path = (value: typeof first) =>
      new URL(value.output.choices[0]?.message.content[0]?.image ?? "").pathname;
    expect(path(first)).toBe(path(second));
    const other = (await (
      await post(pictor("pictor-image-max", [{ text: "same" }], { seed: 8 }))
    ).json()) as typeof first;
    expect(path(other)).not.toBe(path(first));
  });

  it("refuses the returned link once its 24 hours have passed", async () => {
    const response = await post(pictor("pictor-image-2.0", [{ text: "short-lived" }]));
    const body = (await response.json()) as {
      output: { choices: { message: { content: { image: string }[] } }[] };
    };
    const url = body.output.choices[0]?.message.content[0]?.image ?? "";
    expect((await fetch(url)).status).toBe(200);
    await advanceSandboxClock(23 * 3600);
    expect((await fetch(url)).status).toBe(200);
    await advanceSandboxClock(3600 + 60);
    const late = await fetch(url);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain("Request has expired.");
  });

  it("refuses a tampered link and one forged with another secret", async () => {
    const response = await post(pictor("pictor-image-2.0", [{ text: "tamper with me" }]));
    const body = (await response.json()) as {
      output: { choices: { message: { content: { image: string }[] } }[] };
    };
    const valid = body.output.choices[0]?.message.content[0]?.image ?? "";
    expect((await fetch(valid)).status).toBe(200);
    const later = valid.replace(
      /Expires=(\d+)/,
      (_, value: string) => `Expires=${Number(value) + 3600}`,
    );
    expect((await fetch(later)).status).toBe(403);
    const file = new URL(valid).pathname.split("/").pop() ?? "";
    const expires = Math.floor(Date.now() / 1000) + 10 * 365 * 24 * 3600;
    // The fixed key the sandbox once signed with no longer works.
    const signature = createHmac("sha256", "switchyard-sandbox-results")
      .update(`${file}\n${expires}`)
      .digest("base64url");
    const forged = `${gateway.sandboxUrl}/__results/${file}?Expires=${expires}&Signature=${signature}`;
    const refused = await fetch(forged);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("SignatureDoesNotMatch");
  });

  it("passes the provider's errors through: moderation, download failures, throttling", async () => {
    const blocked = await expectProviderError(
      await post(
        pictor("pictor-image-2.0", [{ text: "a cat [[sandbox:code=DataInspectionFailed]]" }]),
      ),
      400,
      "DataInspectionFailed",
    );
    expect(blocked.message).toMatch(/inappropriate content/);
    const unreachable = await expectProviderError(
      await post(
        pictor("pictor-image-edit", [{ image: "https://nowhere.invalid/a.png" }, { text: "x" }]),
      ),
      400,
      "InvalidParameter",
    );
    expect(unreachable.message).toMatch(/Failed to download multimodal content/);
    const busy = await post(
      pictor("pictor-image-2.0", [{ text: "busy [[sandbox:status=429;retry-after=7]]" }]),
    );
    // The vendor's Retry-After reaches the client with its own code.
    expect(busy.headers.get("retry-after")).toBe("7");
    await expectProviderError(busy, 429, "Throttling.RateQuota");
  });

  it("answers 402 (message only) when the balance cannot cover the image", async () => {
    const poor = await createUser(gateway, { balanceMicros: 1000 });
    const response = await post(pictor("pictor-image-2.0", [{ text: "x" }]), poor.key);
    expect(response.status).toBe(402);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(Object.keys(body.error)).toEqual(["message"]);
  });

  it("answers a key without access in the provider dialect too, and a missing key as 401", async () => {
    expect((await post(pictor("pictor-image-2.0", [{ text: "x" }]), "sk-wrong")).status).toBe(401);
  });
});
