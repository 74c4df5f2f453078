/**
 * The MCP endpoint through the official SDK client: initialize, every tool listed with schemas
 * and called once against the sandbox, every resource listed and read, the prompts, and a key
 * restricted to some models seeing and reaching only those.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { describeImage, pngBytes } from "./support/image-fixtures.ts";
import { connectMcp } from "./support/mcp-client.ts";

interface Block {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
}

const TOOLS = [
  "chat",
  "create_embeddings",
  "edit_image",
  "generate_image",
  "generate_video",
  "get_balance",
  "get_usage",
  "get_video_task",
  "list_models",
  "quote",
  "synthesize_speech",
];

describe("MCP endpoint", () => {
  let gateway: TestGateway;
  let key: string;
  let client: Client;

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
    const blocks = result.content as Block[];
    expect(result.isError, blocks.map((block) => block.text).join("\n")).toBeFalsy();
    return {
      structured: result.structuredContent as Record<string, unknown>,
      blocks,
      meta: result._meta,
    };
  };

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { tasks: { tick_ms: 20, poll_min_interval_ms: 20 } },
    });
    key = (await createUser(gateway, { balanceMicros: 50_000_000 })).key;
    client = await connectMcp(gateway, key);
  });
  afterAll(async () => {
    await client?.close();
    await gateway?.close();
  });

  it("initializes with the gateway's name, instructions and capabilities", () => {
    expect(client.getServerVersion()?.name).toBe("switchyard");
    expect(client.getInstructions()).toMatch(/micro-USD/);
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.tools).toBeDefined();
    expect(capabilities?.resources).toBeDefined();
    expect(capabilities?.prompts).toBeDefined();
  });

  it("lists every tool with input and output schemas, a description and annotations", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(typeof tool.annotations?.readOnlyHint).toBe("boolean");
    }
    const billable = tools.filter((tool) => tool.annotations?.readOnlyHint === false);
    expect(billable.map((tool) => tool.name).sort()).toEqual([
      "chat",
      "create_embeddings",
      "edit_image",
      "generate_image",
      "generate_video",
      "synthesize_speech",
    ]);
  });

  it("chat answers the model's reply with usage and cost", async () => {
    const { structured, blocks, meta } = await call("chat", {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Say hello" }],
      max_tokens: 50,
    });
    expect(structured.model).toBe("gpt-4o-mini");
    expect(typeof structured.content).toBe("string");
    expect(structured.cost_micros).toBeGreaterThan(0);
    expect(blocks[0]?.text).toBe(structured.content);
    // The sandbox answered: marked, as HTTP marks it with x-switchyard-sandbox.
    expect(meta?.["switchyard/sandbox"]).toBe(true);
  });

  it("generate_image returns links (pictor) and images (imgmodel)", async () => {
    const pictor = await call("generate_image", {
      model: "pictor-image-2.0",
      prompt: "a red bicycle",
      size: "1024*1024",
    });
    const link = pictor.blocks.find((block) => block.type === "resource_link");
    expect(link?.uri).toMatch(/^http/);
    const fetched = Buffer.from(await (await fetch(link!.uri!)).arrayBuffer());
    expect(describeImage(fetched)).toMatchObject({ width: 1024, height: 1024 });

    const openai = await call("generate_image", {
      model: "imgmodel-2",
      prompt: "a red bicycle",
      size: "1024x1024",
    });
    const image = openai.blocks.find((block) => block.type === "image");
    expect(image?.mimeType).toMatch(/^image\//);
    expect(describeImage(Buffer.from(image!.data!, "base64")).width).toBe(1024);
    expect(openai.structured.cost_micros).toBeGreaterThan(0);
  });

  it("edit_image takes base64 images and a mask", async () => {
    const { structured, blocks } = await call("edit_image", {
      model: "imgmodel-2",
      prompt: "make it blue",
      images: [{ base64: pngBytes(64, 64).toString("base64") }],
      mask: { base64: pngBytes(64, 64, { alpha: true }).toString("base64") },
    });
    expect(blocks.some((block) => block.type === "image")).toBe(true);
    expect(structured.cost_micros).toBeGreaterThan(0);
  });

  it("edit_image refuses a URL on a private address and bad base64 with the API's 400", async () => {
    const result = await client.callTool({
      name: "edit_image",
      arguments: {
        model: "imgmodel-2",
        prompt: "x",
        images: [{ url: "http://127.0.0.1:1/a.png" }],
      },
    });
    expect(result.isError).toBe(true);
    expect((result.content as Block[])[0]?.text).toMatch(
      /^400 invalid_parameter: Invalid 'images\[0\]'/,
    );
  });

  it("create_embeddings returns vectors in order", async () => {
    const { structured } = await call("create_embeddings", {
      model: "text-embedding-v4",
      input: ["one", "two", "three"],
      dimensions: 256,
    });
    expect(structured.embeddings).toHaveLength(3);
    expect(structured.dimensions).toBe(256);
  });

  it("synthesize_speech returns decodable audio as an audio block", async () => {
    const { structured, blocks } = await call("synthesize_speech", {
      model: "tts3-flash",
      input: "Hello from the gateway.",
      voice: "Cherry",
      response_format: "wav",
    });
    const audio = blocks.find((block) => block.type === "audio");
    expect(audio?.mimeType).toBe("audio/wav");
    const bytes = Buffer.from(audio!.data!, "base64");
    expect(bytes.subarray(0, 4).toString("latin1")).toBe("RIFF");
    expect(structured.bytes).toBe(bytes.length);
    expect(structured.cost_micros).toBeGreaterThan(0);
  });

  it("generate_video waits for the task with progress, get_video_task reads it", async () => {
    const progress: number[] = [];
    const result = await client.callTool(
      {
        name: "generate_video",
        arguments: {
          model: "gen-video",
          prompt: "[[sandbox:video-seconds=0.4]] waves at dusk",
          duration: 2,
          wait: true,
          wait_seconds: 30,
        },
      },
      undefined,
      { timeout: 60_000, onprogress: (note) => progress.push(note.progress) },
    );
    expect(result.isError).toBeFalsy();
    const task = result.structuredContent as {
      id: string;
      status: string;
      content: { video_url: string } | null;
    };
    expect(task.status).toBe("succeeded");
    expect(task.content?.video_url).toMatch(/^http/);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(100);

    const read = await call("get_video_task", { id: task.id });
    expect(read.structured.id).toBe(task.id);
    expect(read.blocks.some((block) => block.type === "resource_link")).toBe(true);
  });

  it("generate_video without wait returns the queued task at once", async () => {
    const { structured } = await call("generate_video", {
      model: "motion2.6-t2v",
      prompt: "[[sandbox:video-seconds=0.4]] a lighthouse",
    });
    expect(["queued", "running"]).toContain(structured.status);
  });

  it("get_balance, get_usage, list_models and quote answer as the HTTP API does", async () => {
    const balance = await call("get_balance", {});
    expect(balance.meta).toBeUndefined();
    const http = await (await gateway.request("/v1/account/balance", { key })).json();
    expect(balance.structured).toEqual(http);

    const usage = await call("get_usage", { limit: 5 });
    expect((usage.structured.data as unknown[]).length).toBeGreaterThan(0);

    const models = await call("list_models", { kind: "speech" });
    const ids = (models.structured.models as { id: string; endpoint: string }[]).map(
      (m) => m.endpoint,
    );
    expect(new Set(ids)).toEqual(new Set(["speech"]));

    const body = {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 100,
    };
    const quote = await call("quote", { request: body });
    const httpQuote = await (
      await gateway.request("/v1/billing/quote", { key, json: body })
    ).json();
    expect(quote.structured).toEqual(httpQuote);
  });

  it("lists and reads every resource, and the templates", async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((resource) => resource.uri);
    for (const uri of [
      "switchyard://catalog",
      "switchyard://pricing",
      "switchyard://account/balance",
      "switchyard://account/usage",
      "switchyard://reference/chat-completions",
      "switchyard://reference/videos-generations",
    ])
      expect(uris).toContain(uri);
    for (const resource of resources) {
      const { contents } = await client.readResource({ uri: resource.uri });
      const content = contents[0] as { text: string; mimeType: string };
      expect(content.mimeType).toBe(resource.mimeType);
      if (content.mimeType === "application/json")
        expect(() => JSON.parse(content.text)).not.toThrow();
      else expect(content.text).toMatch(/^# (GET|POST|DELETE|PATCH) \//);
    }
    const chat = await client.readResource({ uri: "switchyard://reference/chat-completions" });
    expect((chat.contents[0] as { text: string }).text).toContain("| `messages` |");

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
      "switchyard://models/{id}",
    );
    const model = await client.readResource({ uri: "switchyard://models/gpt-4o-mini" });
    expect(JSON.parse((model.contents[0] as { text: string }).text).id).toBe("gpt-4o-mini");
    const price = await client.readResource({ uri: "switchyard://pricing/gpt-4o-mini" });
    expect(JSON.parse((price.contents[0] as { text: string }).text).pricing).toBeDefined();
    await expect(client.readResource({ uri: "switchyard://models/no-such-model" })).rejects.toThrow(
      /No resource/,
    );
  });

  it("lists one reference resource per HTTP endpoint, each reading its own endpoint's document", async () => {
    const { resources } = await client.listResources();
    const reference = resources.filter((resource) =>
      resource.uri.startsWith("switchyard://reference/"),
    );
    const uris = reference.map((resource) => resource.uri);
    expect(uris.filter((uri, index) => uris.indexOf(uri) !== index)).toEqual([]);
    const names = reference.map((resource) => resource.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    const endpoints = new Set<string>();
    for (const resource of reference) {
      const { contents } = await client.readResource({ uri: resource.uri });
      const heading = (contents[0] as { text: string }).text.split("\n")[0];
      expect(heading, resource.uri).toBe(`# ${resource.title}`);
      endpoints.add(resource.title!);
    }
    expect(endpoints.size).toBe(reference.length);
    const openapi = (await (await gateway.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(openapi.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map(
        (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`,
      ),
    );
    expect(new Set(endpoints)).toEqual(new Set(documented));
    // Endpoints that were already unique keep their URIs.
    for (const [uri, title] of [
      ["switchyard://reference/chat-completions", "POST /v1/chat/completions"],
      ["switchyard://reference/account-keys", "GET /v1/account/keys"],
      ["switchyard://reference/post-account-keys", "POST /v1/account/keys"],
      ["switchyard://reference/healthz", "GET /healthz"],
      ["switchyard://reference/v1-healthz", "GET /v1/healthz"],
    ] as const) {
      const { contents } = await client.readResource({ uri });
      expect((contents[0] as { text: string }).text.split("\n")[0]).toBe(`# ${title}`);
    }
  });

  it("lists the prompts and fills them in", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(
      expect.arrayContaining(["generate_video_and_wait", "pick_model", "estimate_cost"]),
    );
    const prompt = await client.getPrompt({
      name: "generate_video_and_wait",
      arguments: { idea: "a cat surfing" },
    });
    const [message] = prompt.messages;
    expect((message!.content as { text: string }).text).toContain("a cat surfing");
    await expect(client.getPrompt({ name: "pick_model", arguments: {} })).rejects.toThrow(/task/);
  });

  it("an unknown tool is a protocol error; bad arguments are a tool error with the API's message", async () => {
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(
      /Unknown tool/,
    );
    const result = await client.callTool({ name: "chat", arguments: { model: "gpt-4o-mini" } });
    expect(result.isError).toBe(true);
    expect((result.content as Block[])[0]?.text).toMatch(/^400 missing_parameter|^400 invalid/);
  });

  it("a key restricted to some models sees only those and reaches no other through any tool", async () => {
    const restricted = await createUser(gateway, {
      balanceMicros: 10_000_000,
      keyOptions: { models: ["gpt-4o-mini"] },
    });
    const limited = await connectMcp(gateway, restricted.key);
    try {
      const catalog = await limited.readResource({ uri: "switchyard://catalog" });
      const listed = JSON.parse((catalog.contents[0] as { text: string }).text) as {
        models: { id: string }[];
      };
      expect(listed.models.map((model) => model.id)).toEqual(["gpt-4o-mini"]);
      const pricing = await limited.readResource({ uri: "switchyard://pricing" });
      expect(
        Object.keys(JSON.parse((pricing.contents[0] as { text: string }).text).models),
      ).toEqual(["gpt-4o-mini"]);
      await expect(
        limited.readResource({ uri: "switchyard://models/tts3-flash" }),
      ).rejects.toThrow();
      const calls: [string, Record<string, unknown>][] = [
        ["chat", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] }],
        ["generate_image", { model: "imgmodel-2", prompt: "x" }],
        [
          "edit_image",
          {
            model: "imgmodel-2",
            prompt: "x",
            images: [{ base64: pngBytes(8, 8).toString("base64") }],
          },
        ],
        ["generate_video", { model: "gen-video", prompt: "x" }],
        ["create_embeddings", { model: "text-embedding-v4", input: "x" }],
        ["synthesize_speech", { model: "tts3-flash", input: "x", voice: "Cherry" }],
        ["quote", { request: { model: "tts3-flash", input: "x" } }],
      ];
      for (const [name, args] of calls) {
        const result = await limited.callTool({ name, arguments: args });
        expect(result.isError, name).toBe(true);
        expect((result.content as Block[])[0]?.text, name).toMatch(/^403 model_not_allowed/);
      }
      const models = await limited.callTool({ name: "list_models", arguments: {} });
      expect((models.structuredContent as { models: unknown[] }).models).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });
});
