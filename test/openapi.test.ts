import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

interface Operation {
  operationId: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, unknown>;
}

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
  security: Record<string, unknown[]>[];
  paths: Record<string, Record<string, Operation>>;
}

describe("the OpenAPI document", () => {
  let gateway: TestGateway;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    gateway = await startTestGateway();
    const response = await gateway.request("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    doc = (await response.json()) as OpenApiDocument;
  });
  afterAll(() => gateway.close());

  it("is served without a key and validates as OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.openapi).toBe("3.1.0");
  });

  it("has version 1.0.0 (spec section 9)", () => {
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.info.title.length).toBeGreaterThan(0);
  });

  it("declares HTTP bearer security for all operations (spec section 5)", () => {
    const schemes = Object.entries(doc.components.securitySchemes).filter(
      ([, scheme]) => scheme.type === "http" && scheme.scheme === "bearer",
    );
    expect(schemes).toHaveLength(1);
    const [name] = schemes[0]!;
    expect(doc.security).toEqual([{ [name]: [] }]);
  });

  it("contains the public paths", () => {
    for (const [path, method] of [
      ["/v1/chat/completions", "post"],
      ["/v1/responses", "post"],
      ["/v1/responses/{id}", "get"],
      ["/v1/responses/{id}", "delete"],
      ["/v1/responses/{id}/input_items", "get"],
      ["/v1/models", "get"],
      ["/v1/models/{id}", "get"],
      ["/v1/account/register", "post"],
      ["/v1/account/login", "post"],
      ["/v1/account", "get"],
      ["/v1/account/keys", "post"],
      ["/v1/account/keys/{id}", "delete"],
      ["/v1/admin/accounts", "get"],
      ["/v1/admin/accounts", "post"],
      ["/v1/admin/accounts/{id}/credit", "post"],
      ["/v1/admin/keys/{id}/revoke", "post"],
      ["/v1/admin/audit", "get"],
      ["/v1/account/logout", "post"],
      ["/v1/account/ledger", "get"],
      ["/v1/account/credit-codes/redeem", "post"],
      ["/v1/admin/credit-codes", "get"],
      ["/v1/admin/credit-codes", "post"],
      ["/v1/admin/credit-codes/{id}/revoke", "post"],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(Object.keys(doc.paths).every((path) => !path.includes(":"))).toBe(true);
  });

  it("marks only health, the document, registration and login as public", () => {
    const open = Object.entries(doc.paths)
      .flatMap(([path, operations]) =>
        Object.entries(operations)
          .filter(([, operation]) => operation.security?.length === 0)
          .map(([method]) => `${method} ${path}`),
      )
      .sort();
    expect(open).toEqual([
      "get /healthz",
      "get /openapi.json",
      "get /readyz",
      "get /v1/healthz",
      "get /v1/openapi.json",
      "get /v1/readyz",
      "post /v1/account/login",
      "post /v1/account/register",
    ]);
  });

  it("describes every registered route once, with unique operation ids", () => {
    const operations = Object.values(doc.paths).flatMap((operations) => Object.values(operations));
    expect(operations).toHaveLength(gateway.app.routeDocs.length);
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("declares every path parameter", () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      for (const operation of Object.values(operations)) {
        const declared = (operation.parameters ?? [])
          .filter((parameter) => parameter.in === "path" && parameter.required)
          .map((parameter) => parameter.name);
        expect(declared, path).toEqual(names);
      }
    }
  });

  it("documents the chat request limits from the validation schema", () => {
    const schema = doc.paths["/v1/chat/completions"]!.post!.requestBody!.content[
      "application/json"
    ]!.schema as {
      required: string[];
      properties: Record<string, { minimum?: number; maximum?: number }>;
    };
    expect(schema.required).toEqual(["model", "messages"]);
    expect(schema.properties.temperature).toMatchObject({ minimum: 0, maximum: 2 });
    expect(schema.properties.top_p).toMatchObject({ minimum: 0, maximum: 1 });
    expect(schema.properties.presence_penalty).toMatchObject({ minimum: -2, maximum: 2 });
  });

  it("documents the admin list paging as query parameters", () => {
    const parameters = doc.paths["/v1/admin/accounts"]!.get!.parameters ?? [];
    expect(parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual([
      "query:limit",
      "query:offset",
      "query:email",
    ]);
  });
});
