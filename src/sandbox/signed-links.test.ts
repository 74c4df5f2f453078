/**
 * The result hosts' links over real HTTP: a link the sandbox gave works; one forged with the key
 * the sandbox once used, one from another sandbox, a tampered one and an expired one are refused
 * with OSS's errors. Expiry is reached by moving the sandbox's test clock forward.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MULTIMODAL_PATH } from "./dashscope-multimodal.ts";
import { type RunningSandbox, startSandbox } from "./server.ts";
import { AUTH_HEADERS } from "./test-kit.ts";

let sandbox: RunningSandbox;
let other: RunningSandbox;
beforeAll(async () => {
  [sandbox, other] = await Promise.all([startSandbox({}), startSandbox({})]);
});
afterAll(() => Promise.all([sandbox.close(), other.close()]));
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: "POST",
    headers: AUTH_HEADERS,
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** A DALL·E 2 link (valid 60 minutes). */
async function imageLink(prompt = "a lighthouse"): Promise<URL> {
  const body = (await post("/openai/v1/images/generations", {
    model: "dall-e-2",
    prompt,
    size: "256x256",
    response_format: "url",
  })) as { data: { url: string }[] };
  return new URL(body.data[0]?.url ?? "");
}

/** A Qwen3-TTS WAV link (valid 24 hours). */
async function speechLink(): Promise<URL> {
  const body = (await post(MULTIMODAL_PATH, {
    model: "qwen3-tts-flash",
    input: { text: "Hello", voice: "Cherry" },
  })) as { output: { audio: { url: string } } };
  return new URL(body.output.audio.url);
}

async function advanceClock(seconds: unknown) {
  return fetch(`${sandbox.url}/__sandbox/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
}

async function expectRefused(url: URL | string, status: number, code: string, message?: string) {
  const response = await fetch(url);
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/xml/);
  expect(text).toContain(`<Code>${code}</Code>`);
  if (message) expect(text).toContain(`<Message>${message}</Message>`);
}

/** The link signed as the sandbox once did, with its fixed public key. */
function forgedWithFixedKey(link: URL, expires: number): string {
  const file = link.pathname.split("/").pop() ?? "";
  const signature = createHmac("sha256", "switchyard-sandbox-results")
    .update(`${file}\n${expires}`)
    .digest("base64url");
  return `${link.origin}${link.pathname}?Expires=${expires}&OSSAccessKeyId=sandbox&Signature=${signature}`;
}

describe("result links", () => {
  it("serves a valid image link and a valid speech link", async () => {
    const image = await fetch(await imageLink());
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    const speech = await fetch(await speechLink());
    expect(speech.status).toBe(200);
    expect(speech.headers.get("content-type")).toBe("audio/wav");
  });

  it("refuses links forged with the old fixed key, even far in the future", async () => {
    const farFuture = Math.floor(Date.now() / 1000) + 10 * 365 * 24 * 3600;
    for (const link of [await imageLink(), await speechLink()]) {
      await expectRefused(forgedWithFixedKey(link, farFuture), 403, "SignatureDoesNotMatch");
    }
  });

  it("refuses another sandbox's links: each start has its own secret", async () => {
    const link = await imageLink();
    await expectRefused(`${other.url}${link.pathname}${link.search}`, 403, "SignatureDoesNotMatch");
  });

  it("refuses a link whose expiry, file or signature was changed", async () => {
    const link = await imageLink();
    const later = new URL(link);
    later.searchParams.set("Expires", String(Number(link.searchParams.get("Expires")) + 3600));
    await expectRefused(later, 403, "SignatureDoesNotMatch");
    const bigger = new URL(link);
    bigger.pathname = link.pathname.replace("256x256", "512x512");
    await expectRefused(bigger, 403, "SignatureDoesNotMatch");
    const cut = new URL(link);
    cut.searchParams.set("Signature", (link.searchParams.get("Signature") ?? "").slice(0, -1));
    await expectRefused(cut, 403, "SignatureDoesNotMatch");
    const unsigned = new URL(link);
    unsigned.searchParams.delete("Signature");
    await expectRefused(unsigned, 403, "AccessDenied");
  });

  it("refuses links once they expire (images after 60 minutes, speech after 24 hours)", async () => {
    const image = await imageLink();
    const speech = await speechLink();
    expect((await advanceClock(59 * 60)).status).toBe(200);
    expect((await fetch(image)).status).toBe(200);
    expect((await advanceClock(2 * 60)).status).toBe(200);
    await expectRefused(image, 403, "AccessDenied", "Request has expired.");
    expect((await fetch(speech)).status).toBe(200);
    expect(await (await advanceClock(24 * 3600)).json()).toMatchObject({
      advanced_seconds: 61 * 60 + 24 * 3600,
    });
    await expectRefused(speech, 403, "AccessDenied", "Request has expired.");
    // A reset puts the clock back; the link is then valid again, until it really expires.
    await fetch(`${sandbox.url}/__sandbox/reset`, { method: "POST" });
    expect((await fetch(image)).status).toBe(200);
  });

  it("moves the clock only forward, by a bounded integer", async () => {
    for (const bad of [-1, 1.5, "60", null, 10 * 365 * 24 * 3600 + 1]) {
      const response = await advanceClock(bad);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: { param: "advance_seconds", code: "invalid_value" },
      });
    }
  });
});
