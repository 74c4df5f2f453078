import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Catalog,
  CatalogError,
  type CatalogModel,
  loadCatalogData,
  readCatalogFile,
  SHIPPED_CATALOG_DIR,
} from "../src/catalog/index.ts";
import { loadConfig } from "../src/config/index.ts";
import { type RunningSandbox, startSandbox } from "../src/sandbox/server.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { SPEC_MODEL_IDS } from "./support/spec-model-ids.ts";

function tmpDir(): string {
  return mkdtempSync(join(tmpdir(), "switchyard-catalog-"));
}

function catalogFile(yaml: string): string {
  const path = join(tmpDir(), "extra.yaml");
  writeFileSync(path, yaml);
  return path;
}

function catalogError(load: () => unknown): CatalogError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogError);
    return error as CatalogError;
  }
  throw new Error("expected a CatalogError");
}

/** Every number reachable from `value`, with its path. */
function numbers(value: unknown, path: string): [string, number][] {
  if (typeof value === "number") return [[path, value]];
  if (value && typeof value === "object")
    return Object.entries(value).flatMap(([key, inner]) => numbers(inner, `${path}.${key}`));
  return [];
}

const MODEL_YAML = (id: string, price: string, extra = "") => `models:
  - id: ${id}
    endpoint: chat
    family: test
    display_name: Test model
    owned_by: tests
    pricing:
      per_1m_tokens: { input: ${price}, output: 2000000 }
    routes:
      - { vendor: openai, upstream_model: ${id} }
${extra}`;

describe("the shipped catalog", () => {
  const data = loadCatalogData({});
  const catalog = new Catalog(data, {
    env: {},
    sandboxUrl: "http://127.0.0.1:9",
    sandboxMode: "auto",
  });
  const models = catalog.list();

  it("loads with at least 100 models from at least 6 owners", () => {
    expect(models.length).toBeGreaterThanOrEqual(100);
    expect(new Set(models.map((model) => model.owned_by)).size).toBeGreaterThanOrEqual(6);
  });

  it("contains every model id named in the spec", () => {
    const ids = new Set(models.map((model) => model.id));
    const missing = SPEC_MODEL_IDS.filter((id) => !ids.has(id));
    expect(missing).toEqual([]);
  });

  it("serves each spec model family on the right endpoint", () => {
    const endpoint = (id: string) => catalog.get(id)?.endpoint;
    expect(endpoint("text-embedding-v4")).toBe("embedding");
    expect(endpoint("vec-4")).toBe("embedding");
    expect(endpoint("tts3-flash")).toBe("speech");
    expect(endpoint("motion2.7-t2v")).toBe("video");
    expect(endpoint("gen-video")).toBe("video");
    expect(endpoint("pictor-image-2.0")).toBe("image-generation");
    expect(endpoint("imgmodel-2")).toBe("image-edit");
  });

  it("follows the limits of spec section 8", () => {
    for (const id of ["vec-4-large", "vec-4", "vec-4-lite"]) {
      expect(catalog.get(id)?.capabilities?.dimensions, id).toEqual([256, 512, 1024, 2048]);
    }
    for (const id of ["pictor-image-edit", "pictor-image-edit-plus", "pictor-image-edit-max"]) {
      expect(catalog.get(id)?.capabilities?.reference_images, id).toEqual({ min: 1, max: 3 });
    }
    const with480p = models
      .filter((model) => model.id.startsWith("motion"))
      .filter((model) => model.capabilities?.resolutions?.includes("480p"))
      .map((model) => model.id)
      .sort();
    expect(with480p).toEqual(["motion2.5-i2v-preview", "motion2.5-t2v-preview"]);
  });

  it("prices everything in integer micro-USD", () => {
    for (const model of models) {
      const prices = numbers(model.pricing, model.id);
      expect(prices.length, model.id).toBeGreaterThan(0);
      for (const [path, price] of prices) {
        expect(Number.isSafeInteger(price), path).toBe(true);
        expect(price, path).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it("has unique ids across the shipped files", () => {
    const dir = join(SHIPPED_CATALOG_DIR, "models");
    const ids = readdirSync(dir).flatMap((name) =>
      (readCatalogFile(join(dir, name)).models ?? []).map((model) => model.id),
    );
    const duplicates = ids.filter((id, index) => ids.indexOf(id) !== index);
    expect(duplicates).toEqual([]);
    expect(ids.length).toBe(models.length);
  });

  it("routes every model to a known vendor and, without credentials, to the sandbox", () => {
    for (const model of models) {
      for (const route of model.routes) expect(data.vendors[route.vendor], model.id).toBeDefined();
      expect(model.resolvedRoutes.length, model.id).toBeGreaterThan(0);
      expect(model.resolvedRoutes.every((route) => route.sandbox)).toBe(true);
    }
  });

  it("routes to the real vendor when its credential is set, and other vendors nowhere", () => {
    const real = new Catalog(data, {
      env: { OPENAI_API_KEY: "sk-real" },
      sandboxUrl: "http://127.0.0.1:9",
      sandboxMode: "auto",
    });
    const route = real.get("gpt-4o-mini")!.resolvedRoutes[0]!;
    expect(route).toMatchObject({
      sandbox: false,
      baseUrl: "https://api.openai.com/v1",
      apiKey: "sk-real",
      upstreamModel: "gpt-4o-mini",
    });
    // `auto` with a credential set is no demo: a vendor without one is not simulated.
    const claude = real.list().find((model) => model.routes[0]?.vendor === "anthropic")!;
    expect(claude.resolvedRoutes).toEqual([]);
    expect(claude.missingCredentials).toEqual([
      { vendor: "anthropic", credentialEnv: "ANTHROPIC_API_KEY" },
    ]);
    expect(real.list().flatMap((model) => model.resolvedRoutes.filter((r) => r.sandbox))).toEqual(
      [],
    );
  });

  it("routes every vendor to the sandbox under `always`, credential or not, and none under `never`", () => {
    const env = { OPENAI_API_KEY: "sk-real" };
    const always = new Catalog(data, {
      env,
      sandboxUrl: "http://127.0.0.1:9",
      sandboxMode: "always",
    });
    for (const model of always.list()) {
      expect(model.resolvedRoutes.length, model.id).toBeGreaterThan(0);
      expect(model.resolvedRoutes.every((route) => route.sandbox)).toBe(true);
    }
    const never = new Catalog(data, {
      env: {},
      sandboxUrl: "http://127.0.0.1:9",
      sandboxMode: "never",
    });
    for (const model of never.list()) {
      expect(model.resolvedRoutes, model.id).toEqual([]);
      expect(model.missingCredentials.length, model.id).toBeGreaterThan(0);
    }
  });
});

describe("catalog validation", () => {
  it("refuses a decimal price, naming the file and the field", () => {
    const file = catalogFile(MODEL_YAML("decimal-model", "1.5"));
    const error = catalogError(() => loadCatalogData({ extraFiles: [file] }));
    expect(error.message).toContain(file);
    expect(error.message).toContain("/models/0/pricing/per_1m_tokens/input");
  });

  it("refuses an unknown field, naming the file and the field", () => {
    const file = catalogFile(MODEL_YAML("odd-model", "1000000", "    colour: blue\n"));
    const error = catalogError(() => loadCatalogData({ extraFiles: [file] }));
    expect(error.message).toContain(file);
    expect(error.message).toContain("/models/0/colour");
  });

  it("refuses an unknown endpoint kind and an empty route list", () => {
    const badKind = catalogFile(MODEL_YAML("x", "1").replace("endpoint: chat", "endpoint: fax"));
    expect(catalogError(() => loadCatalogData({ extraFiles: [badKind] })).message).toContain(
      badKind,
    );
    const noRoutes = catalogFile(MODEL_YAML("y", "1").replace(/routes:\n.*\n/, "routes: []\n"));
    expect(catalogError(() => loadCatalogData({ extraFiles: [noRoutes] })).message).toContain(
      "/models/0/routes",
    );
  });

  it("refuses a route to an unknown vendor without its own adapter and base URL", () => {
    const file = catalogFile(
      MODEL_YAML("lost-model", "1").replace("vendor: openai", "vendor: nowhere"),
    );
    const error = catalogError(() => loadCatalogData({ extraFiles: [file] }));
    expect(error.message).toContain("lost-model");
    expect(error.message).toContain("nowhere");
  });

  it("refuses a file that is not YAML, naming it", () => {
    const file = catalogFile("models: [\n");
    expect(catalogError(() => loadCatalogData({ extraFiles: [file] })).message).toContain(file);
  });
});

describe("catalog additions in switchyard.yaml", () => {
  const yaml = (baseUrl: string) => `catalog:
  models:
    - id: local-llama
      endpoint: chat
      family: llama
      display_name: Local Llama 3.1
      owned_by: self-hosted
      pricing: { per_1m_tokens: { input: 0, output: 0 } }
      routes:
        - vendor: local
          adapter: openai-compatible
          base_url: ${baseUrl}
          credential_env: LOCAL_LLM_KEY
          upstream_model: llama3.1:8b
    - id: local-clip
      endpoint: video
      family: local-clip
      display_name: Local clip model (its server speaks no video protocol)
      owned_by: self-hosted
      pricing: { per_video_second: { "720p": 1000 } }
      routes:
        - vendor: local
          adapter: openai-compatible
          base_url: ${baseUrl}
          credential_env: LOCAL_LLM_KEY
          upstream_model: clip-1
    - id: gpt-4o-mini
      endpoint: chat
      family: gpt-4o-mini
      display_name: GPT-4o mini (house price)
      owned_by: openai
      pricing: { per_1m_tokens: { input: 111, output: 222 } }
      routes:
        - { vendor: openai, upstream_model: gpt-4o-mini }
`;

  it("adds a self-hosted model and overrides a shipped entry by id", () => {
    const cwd = tmpDir();
    writeFileSync(join(cwd, "switchyard.yaml"), yaml("http://10.0.0.5:8000/v1/"));
    const config = loadConfig({ env: {}, cwd });
    const shipped = loadCatalogData({});
    const data = loadCatalogData({ extraModels: config.catalog.models });
    expect(data.models).toHaveLength(shipped.models.length + 2);
    const catalog = new Catalog(data, {
      env: { LOCAL_LLM_KEY: "local-secret" },
      sandboxUrl: "http://127.0.0.1:9",
      sandboxMode: "auto",
    });
    const local = catalog.get("local-llama") as CatalogModel;
    expect(local.owned_by).toBe("self-hosted");
    expect(local.resolvedRoutes).toEqual([
      {
        vendor: "local",
        adapter: "openai-compatible",
        baseUrl: "http://10.0.0.5:8000/v1",
        apiKey: "local-secret",
        upstreamModel: "llama3.1:8b",
        weight: 1,
        sandbox: false,
      },
    ]);
    const overridden = catalog.get("gpt-4o-mini")!;
    expect(overridden.display_name).toBe("GPT-4o mini (house price)");
    expect(overridden.pricing).toEqual({ per_1m_tokens: { input: 111, output: 222 } });
  });

  describe("end to end through the gateway", () => {
    let upstream: RunningSandbox;
    let gateway: TestGateway;

    beforeAll(async () => {
      // A separate OpenAI-compatible server stands in for the self-hosted model.
      upstream = await startSandbox({ host: "127.0.0.1", port: 0 });
      const cwd = tmpDir();
      writeFileSync(join(cwd, "switchyard.yaml"), yaml(`${upstream.url}/selfhosted/v1`));
      const { catalog } = loadConfig({ env: {}, cwd });
      gateway = await startTestGateway({ config: { catalog }, env: { LOCAL_LLM_KEY: "local" } });
    });
    afterAll(async () => {
      await gateway?.close();
      await upstream?.close();
    });

    it("lists and serves the added model from its own base URL", async () => {
      const { key } = await createUser(gateway);
      const listed = await gateway.request("/v1/models/local-llama", { key });
      expect(await listed.json()).toMatchObject({
        id: "local-llama",
        owned_by: "self-hosted",
        available: true,
      });
      const before = upstream.stats().requests;
      const response = await gateway.request("/v1/chat/completions", {
        key,
        json: { model: "local-llama", messages: [{ role: "user", content: "hi there" }] },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        model: string;
        choices: { message: { content: string } }[];
      };
      expect(body.model).toBe("local-llama");
      expect(body.choices[0]?.message.content).toMatch(/^Sandbox reply to hi there/);
      expect(upstream.stats().requests).toBe(before + 1);
    });

    it("lists the models of vendors without a credential as unavailable, with the reason", async () => {
      // A credential is set (LOCAL_LLM_KEY), so the sandbox serves nothing: the shipped vendors
      // have none and wait for theirs.
      expect(gateway.sandboxUrl).toBeUndefined();
      const { key } = await createUser(gateway);
      const video = await gateway.request("/v1/models/local-clip", { key });
      expect(await video.json()).toMatchObject({ endpoint: "video", available: false });
      const chat = await gateway.request("/v1/models/gpt-4o-mini", { key });
      expect(await chat.json()).toMatchObject({
        endpoint: "chat",
        available: false,
        unavailable_reason: {
          code: "vendor_not_configured",
          message: expect.stringContaining("OPENAI_API_KEY"),
        },
      });
      const local = await gateway.request("/v1/models/local-llama", { key });
      const listed = (await local.json()) as Record<string, unknown>;
      expect(listed).toMatchObject({ endpoint: "chat", available: true });
      expect(listed).not.toHaveProperty("unavailable_reason");
    });

    it("shows the overridden shipped entry", async () => {
      const { key } = await createUser(gateway);
      const response = await gateway.request("/v1/models/gpt-4o-mini", { key });
      expect(await response.json()).toMatchObject({
        display_name: "GPT-4o mini (house price)",
        pricing: { per_1m_tokens: { input: 111, output: 222 } },
      });
    });
  });
});
