/**
 * `/openapi.json` against what the gateway really serves: statuses, media types, limits,
 * optional bodies and error shapes a generated client relies on, each checked with a real
 * request beside the document's claim. Tests already in
 * test/openapi.test.ts (validity, paths, unique ids, path parameters, chat limits, paging),
 * test/observability-hostile.test.ts (202 and SSE) and test/images-generations.test.ts
 * (multipart media type) are not repeated.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { pngBytes } from "./support/image-fixtures.ts";

type Schema = Record<string, unknown>;
interface Operation {
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
  security?: unknown[];
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
}

const SANDBOX_VIDEO = "a lighthouse [[sandbox:video-seconds=0.2]]";
/** Property names a schema declares, at its top level or in any of its variants. */
function declaredProperties(schema: Schema): Set<string> {
  const names = new Set(Object.keys((schema.properties as Schema | undefined) ?? {}));
  for (const variant of [
    ...((schema.anyOf as Schema[] | undefined) ?? []),
    ...((schema.oneOf as Schema[] | undefined) ?? []),
    ...((schema.allOf as Schema[] | undefined) ?? []),
  ])
    for (const name of declaredProperties(variant)) names.add(name);
  return names;
}

/** Values a schema admits when it is an enum (`enum`, `const`, or an `anyOf` of `const`s). */
function enumValues(schema: Schema | undefined): unknown[] | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum;
  if ("const" in schema) return [schema.const];
  const variants = schema.anyOf as Schema[] | undefined;
  if (variants?.every((variant) => "const" in variant)) return variants.map((v) => v.const);
  return undefined;
}

describe("/openapi.json against the served API", () => {
  let gateway: TestGateway;
  let doc: Doc;
  let userKey: string;
  let accountId: string;
  const op = (path: string, method: string) => {
    const operation = doc.paths[path]?.[method];
    if (!operation) throw new Error(`${method} ${path} is not in the document`);
    return operation;
  };
  const bodySchema = (path: string, method = "post") =>
    Object.values(op(path, method).requestBody!.content)[0]!.schema;

  beforeAll(async () => {
    gateway = await startTestGateway();
    doc = (await (await gateway.request("/openapi.json")).json()) as Doc;
    const user = await createUser(gateway, { balanceMicros: 1_000_000_000 });
    userKey = user.key;
    accountId = user.accountId;
  });
  afterAll(() => gateway?.close());

  it("POST /v1/account/logout: the 204 is documented without a JSON body", async () => {
    await gateway.request("/v1/account/register", {
      json: { email: "review-logout@example.com", password: "correct horse battery" },
    });
    const login = await gateway.request("/v1/account/login", {
      json: { email: "review-logout@example.com", password: "correct horse battery" },
    });
    const { token } = (await login.json()) as { token: string };
    const response = await gateway.request("/v1/account/logout", { key: token, method: "POST" });
    expect(response.status).toBe(204);
    expect(response.headers.get("content-type")).toBeNull();
    expect(await response.text()).toBe("");
    // A 204 carries no content; documenting application/json makes clients parse "".
    expect(op("/v1/account/logout", "post").responses["204"]?.content).toBeUndefined();
  });

  it("POST /v1/audio/speech: documents audio/wav, which `response_format: wav` answers", async () => {
    const response = await gateway.request("/v1/audio/speech", {
      key: userKey,
      json: { model: "tts3-flash", input: "hello", response_format: "wav" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^audio\/wav/);
    await response.arrayBuffer();
    const content = op("/v1/audio/speech", "post").responses["200"]?.content ?? {};
    expect(Object.keys(content)).toEqual(expect.arrayContaining(["audio/mpeg", "audio/wav"]));
  });

  it("GET /v1/account/usage and /v1/admin/usage: document the text/csv answer of `format=csv`", async () => {
    for (const [path, key] of [
      ["/v1/account/usage", userKey],
      ["/v1/admin/usage", gateway.adminKey],
    ] as const) {
      const response = await gateway.request(`${path}?format=csv`, { key });
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toMatch(/^text\/csv/);
      await response.text();
      const content = op(path, "get").responses["200"]?.content ?? {};
      expect(Object.keys(content), path).toContain("text/csv");
    }
  });

  it("the error schema declares the provider-style fields (`code`, `message`, `request_id`, spec 7)", async () => {
    const response = await gateway.request("/v1/images/generations", {
      key: userKey,
      json: {
        model: "pictor-image-2.0",
        input: { messages: [{ role: "user", content: [{ text: "x" }] }] },
        parameters: { n: 2 },
      },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: "InvalidParameter" });
    expect(typeof body.request_id).toBe("string");
    const schema = op("/v1/images/generations", "post").responses.default!.content![
      "application/json"
    ]!.schema;
    // Only `error` is declared: a generated client drops `code` (`InvalidParameter`,
    // `Throttling.RateQuota`) and `request_id`, the fields spec 7 tells clients to read.
    const declared = declaredProperties(schema);
    for (const name of ["code", "message", "request_id"]) expect([...declared]).toContain(name);
  });

  it("requestBody is optional where the server takes no body", async () => {
    const cases = [
      ["post", "/v1/admin/routes/reset", "/v1/admin/routes/reset", gateway.adminKey],
      ["post", "/v1/account/keys", "/v1/account/keys", userKey],
      [
        "post",
        "/v1/admin/accounts/{id}/keys",
        `/v1/admin/accounts/${accountId}/keys`,
        gateway.adminKey,
      ],
      ["patch", "/v1/account/budget", "/v1/account/budget", userKey],
      [
        "patch",
        "/v1/admin/accounts/{id}/budget",
        `/v1/admin/accounts/${accountId}/budget`,
        gateway.adminKey,
      ],
    ] as const;
    const wrong: string[] = [];
    for (const [method, template, path, key] of cases) {
      const response = await gateway.request(path, { key, method: method.toUpperCase() });
      expect(response.status, `${method} ${path}`).toBeLessThan(300);
      await response.text();
      if (op(template, method).requestBody?.required !== false) wrong.push(`${method} ${template}`);
    }
    expect(wrong).toEqual([]);
  });

  it("chat and responses `metadata`: the 64-character key limit is in the document", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key: userKey,
      json: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        metadata: { ["k".repeat(65)]: "v" },
      },
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("at most 64 characters");
    for (const path of ["/v1/chat/completions", "/v1/responses"]) {
      const metadata = (bodySchema(path).properties as Record<string, Schema>).metadata!;
      // `Type.Record(Type.String({maxLength: 64}), …)` becomes `patternProperties` and the key
      // limit is lost; `propertyNames` would carry it.
      expect(metadata.propertyNames, path).toMatchObject({ maxLength: 64 });
    }
  });

  it("every keyed operation documents the 401 it answers without a key", async () => {
    const undocumented: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths))
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.security?.length === 0) continue;
        const url = path.replace(/\{[^}]+\}/g, "unknown");
        const response = await gateway.request(url, {
          method: method.toUpperCase(),
          ...(operation.requestBody ? { json: {} } : {}),
        });
        await response.arrayBuffer();
        if (response.status !== 401)
          undocumented.push(`${method} ${path} answered ${response.status}`);
        else if (!operation.responses["401"])
          undocumented.push(`${method} ${path}: 401 undocumented`);
      }
    expect(undocumented).toEqual([]);
  });

  it("model endpoints document the money, model and quota errors they answer", async () => {
    const broke = await createUser(gateway, { balanceMicros: 0 });
    const cases: Array<[string, string, number]> = [
      [broke.key, "gpt-4o-mini", 402],
      [userKey, "no-such-model", 404],
    ];
    for (const [key, model, status] of cases) {
      const response = await gateway.request("/v1/chat/completions", {
        key,
        json: { model, messages: [{ role: "user", content: "hi" }] },
      });
      expect(response.status).toBe(status);
      await response.text();
    }
    for (const path of [
      "/v1/chat/completions",
      "/v1/messages",
      "/v1/embeddings",
      "/v1/images/generations",
    ]) {
      const documented = Object.keys(op(path, "post").responses);
      expect(documented, path).toEqual(
        expect.arrayContaining(["400", "401", "402", "404", "429", "502", "503", "504"]),
      );
    }
    // Each error status names the catalogue's codes of that status.
    expect(JSON.stringify(op("/v1/chat/completions", "post").responses["402"])).toContain(
      "insufficient_balance",
    );
  });

  it("POST /v1/images/generations: the pictor body's one message and n of 1 are in the document", async () => {
    const pictor = (bodySchema("/v1/images/generations").anyOf as Schema[]).find(
      (variant) => variant.title === "Pictor image request",
    )!;
    const text = JSON.stringify(pictor);
    const input = (pictor.properties as Record<string, Schema>).input!;
    const messages = (input.properties as Record<string, Schema>).messages!;
    expect(messages).toMatchObject({ minItems: 1, maxItems: 1 });
    expect((messages.items as Schema).properties).toMatchObject({ content: { minItems: 1 } });
    const parameters = (pictor.properties as Record<string, Schema>).parameters!;
    expect((parameters.properties as Record<string, Schema>).n).toMatchObject({
      minimum: 1,
      maximum: 1,
    });
    // The validator's own wording stays out of the document.
    expect(text).not.toContain("errorMessage");
    // And the document's limits are the served ones.
    const response = await gateway.request("/v1/images/generations", {
      key: userKey,
      json: {
        model: "pictor-image-2.0",
        input: {
          messages: [
            { role: "user", content: [{ text: "a" }] },
            { role: "user", content: [{ text: "b" }] },
          ],
        },
      },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "InvalidParameter" });
  });

  it("POST /v1/videos/generations: `image.url` maxLength fits in the request body limit", async () => {
    const url = (
      (
        (bodySchema("/v1/videos/generations").properties as Record<string, Schema>).image!
          .properties as Record<string, Schema>
      ).url as { maxLength: number }
    ).maxLength;
    const bodyLimit = gateway.app.initialConfig.bodyLimit!;
    // A url the document admits (12 M characters of its 20 M) is answered 413.
    const response = await gateway.request("/v1/videos/generations", {
      key: userKey,
      json: {
        model: "gen-video",
        prompt: SANDBOX_VIDEO,
        image: { url: `data:image/png;base64,${"A".repeat(12_000_000)}` },
      },
    });
    expect(response.status).toBe(413);
    await response.text();
    expect(url).toBeLessThan(bodyLimit);
  });

  it("every documented operation is served, and every served route is documented or deliberately left out", () => {
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({
        method: method.toUpperCase() as "GET",
        url: path.replace(/\{(\w+)\}/g, ":$1"),
      })),
    );
    for (const route of documented)
      expect(gateway.app.hasRoute(route), `${route.method} ${route.url}`).toBe(true);
    // Fastify's route table, one "METHOD /path" per line.
    const served = new Set<string>();
    const walk = (text: string) => {
      const stack: string[] = [];
      for (const line of text.split("\n")) {
        const match = /^([│ ]*)(?:[├└]── )?(\S*) \(([^)]+)\)/.exec(line);
        if (!match) continue;
        const depth = Math.floor(match[1]!.length / 4);
        stack.length = depth;
        stack.push(match[2]!);
        const path = stack.join("").replace(/\/+/g, "/");
        for (const method of match[3]!.split(", ")) served.add(`${method} ${path}`);
      }
    };
    walk(gateway.app.printRoutes({ commonPrefix: false }));
    for (const route of [
      "POST /v1/chat/completions",
      "GET /v1/admin/accounts/:id/keys",
      "POST /v1/videos/generations/:id/cancel",
      "GET /mcp",
      "GET /metrics",
    ])
      expect(served.has(route), route).toBe(true);
    const documentedNames = new Set(documented.map((route) => `${route.method} ${route.url}`));
    const left = [...served].filter(
      (route) =>
        !route.startsWith("HEAD ") &&
        !documentedNames.has(route) &&
        !/ \/(mcp|metrics|\.well-known\/|console|$)/.test(route),
    );
    expect(left).toEqual([]);
  });

  it("every documented query parameter accepts the values its schema allows", async () => {
    const created = await gateway.request("/v1/responses", {
      key: userKey,
      json: { model: "gpt-4o-mini", input: "hi [[sandbox:words=2]]", store: true },
    });
    const { id: responseId } = (await created.json()) as { id: string };
    const samples = (name: string, schema: Schema): string[] => {
      const listed = enumValues(schema);
      if (listed) return listed.map(String);
      if (schema.anyOf) return (schema.anyOf as Schema[]).flatMap((item) => samples(name, item));
      if (schema.type === "integer")
        return [String(schema.minimum ?? 1), String(schema.maximum ?? 1)];
      if (name === "from" || name === "to") return ["2026-01-01T00:00:00Z", "1700000000"];
      if (name === "account") return [accountId];
      return ["x"];
    };
    const refused: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths))
      for (const [method, operation] of Object.entries(operations)) {
        const path = template.replace(
          "{id}",
          template.includes("responses") ? responseId : accountId,
        );
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== "query" || ["cursor", "after"].includes(parameter.name)) continue;
          expect(parameter.required, `${template} ${parameter.name}`).not.toBe(true);
          for (const value of samples(parameter.name, parameter.schema)) {
            const response = await gateway.request(
              `${path}?${parameter.name}=${encodeURIComponent(value)}`,
              {
                key: template.includes("responses") ? userKey : gateway.adminKey,
                method: method.toUpperCase(),
              },
            );
            await response.text();
            if (response.status >= 400)
              refused.push(`${method} ${template}?${parameter.name}=${value}: ${response.status}`);
          }
        }
      }
    expect(refused).toEqual([]);
  });

  it("real success bodies validate against the documented response schemas", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const key = userKey;
    const checked: string[] = [];
    const check = async (
      method: string,
      path: string,
      template: string,
      init: RequestInit & { json?: unknown },
    ) => {
      const response = await gateway.request(path, { ...init, key, method });
      const text = await response.text();
      expect(response.status, `${method} ${path}: ${text.slice(0, 300)}`).toBeLessThan(300);
      const media = (response.headers.get("content-type") ?? "").split(";")[0]!;
      const documented = op(template, method.toLowerCase()).responses[String(response.status)];
      const schema = documented?.content?.[media]?.schema;
      expect(schema, `${method} ${template} ${response.status} ${media}`).toBeDefined();
      const validate = ajv.compile(schema!);
      const body = JSON.parse(text) as unknown;
      expect(validate(body), `${method} ${template}: ${JSON.stringify(validate.errors)}`).toBe(
        true,
      );
      checked.push(`${method} ${template}`);
      return body as { id?: string };
    };
    await check("POST", "/v1/chat/completions", "/v1/chat/completions", {
      json: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi [[sandbox:words=2]]" }],
      },
    });
    await check("POST", "/v1/embeddings", "/v1/embeddings", {
      json: { model: "text-embedding-v4", input: ["a", "b"] },
    });
    await check("POST", "/v1/images/generations", "/v1/images/generations", {
      json: {
        model: "pictor-image-2.0",
        input: { messages: [{ role: "user", content: [{ text: "x" }] }] },
      },
    });
    await check("POST", "/v1/images/generations", "/v1/images/generations", {
      json: { model: "legacy-img-2", prompt: "x", response_format: "url" },
    });
    const form = new FormData();
    form.append("model", "imgmodel-2");
    form.append("prompt", "x");
    // OpenAPI 3.1 sends an array property of a form as repeated parts named `image`.
    form.append(
      "image",
      new Blob([new Uint8Array(pngBytes(16, 16))], { type: "image/png" }),
      "a.png",
    );
    form.append(
      "image",
      new Blob([new Uint8Array(pngBytes(16, 16))], { type: "image/png" }),
      "b.png",
    );
    await check("POST", "/v1/images/edits", "/v1/images/edits", { body: form });
    for (const json of [
      { model: "motion2.6-t2v", duration: 5, resolution: "720p", input: { prompt: SANDBOX_VIDEO } },
      { model: "gen-video", prompt: SANDBOX_VIDEO },
    ]) {
      const task = await check("POST", "/v1/videos/generations", "/v1/videos/generations", {
        json,
      });
      await check("GET", `/v1/videos/generations/${task.id}`, "/v1/videos/generations/{id}", {});
    }
    await check("GET", "/v1/models", "/v1/models", {});
    await check("GET", "/v1/models/gpt-4o-mini", "/v1/models/{id}", {});
    const stored = await check("POST", "/v1/responses", "/v1/responses", {
      json: { model: "gpt-4o-mini", input: "hi [[sandbox:words=2]]", store: true },
    });
    await check("GET", `/v1/responses/${stored.id}`, "/v1/responses/{id}", {});
    await check("DELETE", `/v1/responses/${stored.id}`, "/v1/responses/{id}", {});
    expect(checked.length).toBe(14);
  });
});
