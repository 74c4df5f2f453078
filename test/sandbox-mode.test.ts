/**
 * `sandbox.mode` end to end. `auto` with no credential is the demo: the sandbox serves every
 * model and marks every response `x-switchyard-sandbox: true`. `auto` with one credential serves
 * that vendor for real (a stand-in server here) and never simulates the others: their models are
 * listed unavailable and answer `503 vendor_not_configured` on every endpoint. `always` simulates
 * every vendor, credential or not; `never` simulates none.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../src/sandbox/server.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { pngBytes } from "./support/image-fixtures.ts";

const SANDBOX_HEADER = "x-switchyard-sandbox";
const hello = (content: string) => [{ role: "user" as const, content }];

/** The error an official SDK raised for a call that must fail. */
async function failure<C extends abstract new (...args: never[]) => unknown>(
  call: PromiseLike<unknown>,
  type: C,
): Promise<InstanceType<C>> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as InstanceType<C>;
  }
  throw new Error("expected the call to fail");
}

function clients(gateway: TestGateway, key: string) {
  return {
    openai: new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 }),
  };
}

/** The OpenAI vendors' base URLs pointed at a stand-in, so a set credential reaches no real API. */
function openaiAt(standIn: RunningSandbox) {
  const vendor = (adapter: string) => ({
    adapter,
    base_url: `${standIn.url}/openai/v1`,
    credential_env: "OPENAI_API_KEY",
    sandbox_path: "/openai/v1",
  });
  return {
    vendors: { openai: vendor("openai-compatible"), "openai-images": vendor("openai-images") },
  };
}

async function listed(gateway: TestGateway, key: string) {
  const response = await gateway.request("/v1/models", { key });
  const { data } = (await response.json()) as {
    data: {
      id: string;
      available: boolean;
      unavailable_reason?: { code: string; message: string };
    }[];
  };
  return new Map(data.map((model) => [model.id, model]));
}

describe("sandbox.mode auto without any credential (the demo)", () => {
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const banner: string[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway({ print: (line) => banner.push(line) });
    ({ openai, anthropic } = clients(gateway, (await createUser(gateway)).key));
  });
  afterAll(() => gateway.close());

  it("says in the banner that replies are simulated, and by which vendors", () => {
    const line = banner.find((text) => text.includes("SANDBOX"));
    expect(line, banner.join("\n")).toMatch(
      /SANDBOX: replies are simulated, not from real vendors \(.*anthropic.*gemini.*openai.*\)/,
    );
    expect(banner.join("\n")).not.toMatch(/Unavailable until/);
  });

  it("marks chat completions, JSON and streamed, as the sandbox's", async () => {
    const json = await openai.chat.completions
      .create({ model: "gpt-4o-mini", messages: hello("demo") })
      .withResponse();
    expect(json.data.choices[0]?.message.content).toMatch(/^Sandbox reply to demo/);
    expect(json.response.headers.get(SANDBOX_HEADER)).toBe("true");

    const stream = await openai.chat.completions
      .create({ model: "gemini-2.5-flash", messages: hello("stream"), stream: true })
      .withResponse();
    expect(stream.response.headers.get(SANDBOX_HEADER)).toBe("true");
    let text = "";
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? "";
    expect(text.length).toBeGreaterThan(0);
  });

  it("marks messages, JSON and streamed, and count_tokens from an Anthropic route", async () => {
    const request = { model: "claude-haiku-4-5", max_tokens: 50, messages: hello("demo") };
    const json = await anthropic.messages.create(request).withResponse();
    expect(json.data.type).toBe("message");
    expect(json.response.headers.get(SANDBOX_HEADER)).toBe("true");

    const stream = await anthropic.messages.create({ ...request, stream: true }).withResponse();
    expect(stream.response.headers.get(SANDBOX_HEADER)).toBe("true");
    const events: string[] = [];
    for await (const event of stream.data) events.push(event.type);
    expect(events.at(-1)).toBe("message_stop");

    const counted = await anthropic.messages
      .countTokens({ model: "claude-haiku-4-5", messages: hello("count me") })
      .withResponse();
    expect(counted.data.input_tokens).toBeGreaterThan(0);
    expect(counted.response.headers.get(SANDBOX_HEADER)).toBe("true");
  });

  it("marks embeddings and speech", async () => {
    const embedded = await openai.embeddings
      .create({ model: "text-embedding-v4", input: ["one", "two"] })
      .withResponse();
    expect(embedded.data.data).toHaveLength(2);
    expect(embedded.response.headers.get(SANDBOX_HEADER)).toBe("true");

    const speech = await openai.audio.speech.create({
      model: "tts3-flash",
      input: "Hello from the sandbox.",
      voice: "Cherry",
      response_format: "wav",
    });
    expect(speech.headers.get("content-type")).toBe("audio/wav");
    expect(speech.headers.get(SANDBOX_HEADER)).toBe("true");
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(44);
  });

  it("marks image generations (both families) and edits", async () => {
    const generated = await openai.images
      .generate({ model: "imgmodel-1", prompt: "a harbour", size: "1024x1024" })
      .withResponse();
    expect(generated.data.data?.[0]?.b64_json).toBeTruthy();
    expect(generated.response.headers.get(SANDBOX_HEADER)).toBe("true");

    const edited = await openai.images
      .edit({
        model: "imgmodel-2",
        image: await toFile(pngBytes(64, 64), "photo.png", { type: "image/png" }),
        prompt: "a red door",
      })
      .withResponse();
    expect(edited.data.data).toHaveLength(1);
    expect(edited.response.headers.get(SANDBOX_HEADER)).toBe("true");

    const key = (await createUser(gateway)).key;
    const pictor = await gateway.request("/v1/images/generations", {
      key,
      json: {
        model: "pictor-image-2.0",
        input: { messages: [{ role: "user", content: [{ text: "a lighthouse" }] }] },
      },
    });
    expect(pictor.status, await pictor.clone().text()).toBe(200);
    expect(pictor.headers.get(SANDBOX_HEADER)).toBe("true");
  });

  it("marks an error the sandbox answered, but not one the gateway answered itself", async () => {
    const failed = await failure(
      openai.chat.completions.create({
        model: "gpt-4o-mini",
        messages: hello("[[sandbox:status=400]] refuse"),
      }),
      OpenAI.BadRequestError,
    );
    expect(failed).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failed.headers?.get(SANDBOX_HEADER)).toBe("true");

    const refused = await failure(
      openai.chat.completions.create({
        model: "gpt-4o-mini",
        messages: hello("hot"),
        temperature: 5,
      }),
      OpenAI.BadRequestError,
    );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.headers?.get(SANDBOX_HEADER)).toBeNull();
  });

  it("lists every model that has an adapter as available", async () => {
    const key = (await createUser(gateway)).key;
    const models = await listed(gateway, key);
    for (const id of [
      "gpt-4o-mini",
      "claude-haiku-4-5",
      "gemini-2.5-flash",
      "tts3-flash",
      "vec-4",
      "motion2.5-t2v-preview",
      "gen-video",
    ])
      expect(models.get(id), id).toMatchObject({ available: true });
    expect(models.get("gpt-4o-mini")).not.toHaveProperty("unavailable_reason");
  });
});

describe("sandbox.mode auto with one vendor credential", () => {
  let standIn: RunningSandbox;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const banner: string[] = [];
  const standInPaths = async () => {
    const response = await fetch(`${standIn.url}/__sandbox/requests`);
    const { requests } = (await response.json()) as { requests: { path: string }[] };
    return requests.map((request) => request.path);
  };

  beforeAll(async () => {
    // The real OpenAI is played by a separate server: only the gateway's OpenAI routes reach it.
    standIn = await startSandbox({ host: "127.0.0.1", port: 0 });
    gateway = await startTestGateway({
      env: { OPENAI_API_KEY: "sk-operator-openai" },
      config: { catalog: openaiAt(standIn) },
      print: (line) => banner.push(line),
    });
    key = (await createUser(gateway)).key;
    ({ openai, anthropic } = clients(gateway, key));
  });
  afterAll(async () => {
    await gateway?.close();
    await standIn?.close();
  });

  it("starts no sandbox and says which vendors wait for a credential", () => {
    expect(gateway.sandboxUrl).toBeUndefined();
    const text = banner.join("\n");
    expect(text).not.toMatch(/SANDBOX/);
    expect(text).toMatch(
      /Unavailable until their credential is set: .*anthropic \(ANTHROPIC_API_KEY\)/,
    );
    expect(text).not.toMatch(/openai \(OPENAI_API_KEY\)/);
  });

  it("serves the configured vendor from its own base URL, unmarked", async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: "gpt-4o-mini", messages: hello("real") })
      .withResponse();
    expect(data.choices[0]?.message.content).toMatch(/^Sandbox reply to real/);
    expect(response.headers.get(SANDBOX_HEADER)).toBeNull();
    expect(await standInPaths()).toContain("/openai/v1/chat/completions");
  });

  it("lists the other vendors' models as unavailable, naming the credential", async () => {
    const models = await listed(gateway, key);
    expect(models.get("gpt-4o-mini")).toMatchObject({ available: true });
    for (const [id, variable] of [
      ["claude-haiku-4-5", "ANTHROPIC_API_KEY"],
      ["gemini-2.5-flash", "GEMINI_API_KEY"],
      ["tts3-flash", "DASHSCOPE_API_KEY"],
      ["vec-4", "VOYAGE_API_KEY"],
      ["pictor-image-2.0", "DASHSCOPE_API_KEY"],
    ] as const) {
      const model = models.get(id);
      expect(model, id).toMatchObject({
        available: false,
        unavailable_reason: { code: "vendor_not_configured" },
      });
      expect(model?.unavailable_reason?.message, id).toContain(variable);
    }
  });

  it("answers 503 vendor_not_configured on chat completions, never a simulated reply", async () => {
    for (const stream of [false, true]) {
      const error = await failure(
        openai.chat.completions.create({
          model: "claude-haiku-4-5",
          messages: hello("fake?"),
          stream,
        }),
        OpenAI.APIError,
      );
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error.status).toBe(503);
      expect(error.code).toBe("vendor_not_configured");
      expect(error.type).toBe("server_error");
      expect(error.message).toContain("ANTHROPIC_API_KEY");
      expect(error.headers?.get("x-should-retry")).toBe("false");
      expect(error.headers?.get(SANDBOX_HEADER)).toBeNull();
    }
  });

  it("answers 503 on messages and count_tokens, in Anthropic's shape", async () => {
    const request = { model: "gemini-2.5-flash", max_tokens: 20, messages: hello("fake?") };
    const calls = [
      anthropic.messages.create(request),
      anthropic.messages.create({ ...request, stream: true }),
      anthropic.messages.countTokens({ model: request.model, messages: request.messages }),
    ];
    for (const call of calls) {
      const error = await failure(call, Anthropic.APIError);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect(error.status).toBe(503);
      expect(error.errorCode).toBe("vendor_not_configured");
      expect(error.error).toMatchObject({
        type: "error",
        error: { type: "api_error", message: expect.stringContaining("GEMINI_API_KEY") },
      });
    }
  });

  it("answers 503 on embeddings, speech and images (provider dialect)", async () => {
    const failures = [
      openai.embeddings.create({ model: "vec-4", input: "x" }),
      openai.audio.speech.create({ model: "tts3-flash", input: "x", voice: "Cherry" }),
    ];
    for (const call of failures) {
      const error = await failure(call, OpenAI.APIError);
      expect(error.status).toBe(503);
      expect(error.code).toBe("vendor_not_configured");
    }
    // Provider dialect (`pictor`): the spec's fields, and the `error` object the SDKs read.
    const pictor = await failure(
      openai.post("/images/generations", {
        body: {
          model: "pictor-image-2.0",
          input: { messages: [{ role: "user", content: [{ text: "x" }] }] },
        },
      }),
      OpenAI.APIError,
    );
    expect(pictor.status).toBe(503);
    expect(pictor.code).toBe("vendor_not_configured");
    expect(pictor.message).toContain("DASHSCOPE_API_KEY");
  });

  it("sent nothing but the OpenAI calls upstream", async () => {
    const paths = await standInPaths();
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((path) => path.startsWith("/openai/v1/"))).toBe(true);
  });
});

describe("sandbox.mode always and never", () => {
  it("always: the sandbox serves every vendor, one with a credential included", async () => {
    const standIn = await startSandbox({ host: "127.0.0.1", port: 0 });
    const gateway = await startTestGateway({
      env: { OPENAI_API_KEY: "sk-operator-openai" },
      config: { sandbox: { mode: "always" }, catalog: openaiAt(standIn) },
    });
    try {
      const { openai } = clients(gateway, (await createUser(gateway)).key);
      for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
        const { response } = await openai.chat.completions
          .create({ model, messages: hello("always") })
          .withResponse();
        expect(response.headers.get(SANDBOX_HEADER), model).toBe("true");
      }
      expect(standIn.stats().requests).toBe(0);
    } finally {
      await gateway.close();
      await standIn.close();
    }
  });

  it("never: no sandbox, and without credentials every model answers 503", async () => {
    const banner: string[] = [];
    const gateway = await startTestGateway({
      config: { sandbox: { mode: "never" } },
      print: (line) => banner.push(line),
    });
    try {
      expect(gateway.sandboxUrl).toBeUndefined();
      expect(banner.join("\n")).not.toMatch(/SANDBOX/);
      const { openai } = clients(gateway, (await createUser(gateway)).key);
      const error = await failure(
        openai.chat.completions.create({ model: "gpt-4o-mini", messages: hello("never") }),
        OpenAI.APIError,
      );
      expect(error.status).toBe(503);
      expect(error.code).toBe("vendor_not_configured");
      expect(error.message).toContain("OPENAI_API_KEY");
    } finally {
      await gateway.close();
    }
  });
});
