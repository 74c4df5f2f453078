/**
 * Documentation that can be checked mechanically is checked here, so it cannot drift from the
 * code: the README's API table against the routes the gateway registers, the environment
 * variables and settings of docs/configuration.md against the config schema and loader, and
 * the "complete switchyard.yaml" there against the defaults.
 */
import { readFileSync } from "node:fs";
import type { TSchema } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadCatalogData } from "../src/catalog/index.ts";
import { ConfigSchema, ENV_OVERRIDES, loadConfig } from "../src/config/index.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { section, variablesOfTable } from "./support/markdown.ts";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const CONFIGURATION = readFileSync(new URL("../docs/configuration.md", import.meta.url), "utf8");

interface DocumentedRoute {
  method: string;
  path: string;
  /** `/v1/admin/...`: every route under the prefix. */
  prefix: boolean;
}

/**
 * The README's API table: cells like "`POST /v1/messages`, `POST /v1/messages/count_tokens`",
 * "`GET /v1/account`, `/v1/account/balance`" (the method carries over), "`GET/POST /x`" and
 * "`/v1/admin/...`" (a whole prefix).
 */
function readmeRoutes(): DocumentedRoute[] {
  const routes: DocumentedRoute[] = [];
  const rows = section(README, "## The API")
    .split("\n")
    .filter((line) => line.startsWith("| `"));
  for (const row of rows) {
    let methods = ["GET"];
    for (const [, item] of row.split("|")[1]!.matchAll(/`([^`]+)`/g)) {
      const parts = item!.trim().split(/\s+/);
      if (parts.length === 2) methods = parts[0]!.split("/");
      const path = parts.at(-1)!;
      if (path.endsWith("/..."))
        routes.push({ method: "*", path: path.slice(0, -4), prefix: true });
      else for (const method of methods) routes.push({ method, path, prefix: false });
    }
  }
  return routes;
}

describe("README's API table", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("names only routes the gateway serves", () => {
    const routes = readmeRoutes();
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes.filter((documented) => !documented.prefix)) {
      const url = route.path.replace(/\{(\w+)\}/g, ":$1");
      expect(
        gateway.app.hasRoute({ method: route.method, url }),
        `${route.method} ${route.path}`,
      ).toBe(true);
    }
  });

  it("names every route of the API document", async () => {
    const document = (await (await gateway.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = readmeRoutes();
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations).map((name) => name.toUpperCase())) {
        const documented = routes.some((route) =>
          route.prefix
            ? path.startsWith(route.path)
            : route.path === path && route.method === method,
        );
        if (!documented) missing.push(`${method} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

/**
 * Variables read outside the loader's table: the config file's path, the first admin key, and
 * which code the CLI runs (bin/switchyard.js).
 */
const OTHER_VARIABLES = ["SWITCHYARD_CONFIG", "SWITCHYARD_ADMIN_KEY", "SWITCHYARD_RUN"];

describe("docs/configuration.md", () => {
  const credentials = new Set(
    Object.values(loadCatalogData({}).vendors).map((vendor) => vendor.credential_env),
  );

  it("lists exactly the environment variables the gateway reads", () => {
    const table = section(CONFIGURATION, "## Environment variables");
    const documented = variablesOfTable(table).filter((name) => !credentials.has(name));
    expect(new Set(documented)).toEqual(
      new Set([...Object.keys(ENV_OVERRIDES), ...OTHER_VARIABLES]),
    );
  });

  it("names in the README only variables that exist", () => {
    const named = [...README.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)]
      .map((match) => match[1]!)
      .filter((name) => !/^SIG[A-Z]+$/.test(name)); // signals, not variables
    const known = new Set([...Object.keys(ENV_OVERRIDES), ...OTHER_VARIABLES, ...credentials]);
    expect(named.filter((name) => !known.has(name))).toEqual([]);
  });

  /** Every settable key of the schema, as `section.key` (records and lists are one key). */
  function schemaKeys(schema: TSchema, prefix = ""): Array<{ key: string; schema: TSchema }> {
    const properties = (schema as { properties?: Record<string, TSchema> }).properties;
    if (schema.type !== "object" || !properties) return [{ key: prefix, schema }];
    return Object.entries(properties).flatMap(([name, child]) =>
      schemaKeys(child, prefix ? `${prefix}.${name}` : name),
    );
  }

  it("documents every setting, with its default", () => {
    const settings = section(CONFIGURATION, "## Settings");
    const rows = new Map(
      settings
        .split("\n")
        .filter((line) => line.startsWith("| `"))
        .map((line) => {
          const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
          return [cells[1]!.replace(/`/g, ""), cells[3]!] as const;
        }),
    );
    const keys = schemaKeys(ConfigSchema);
    expect(keys.length).toBeGreaterThan(30);
    for (const { key, schema } of keys) {
      expect(rows.has(key), `${key} is documented`).toBe(true);
      const defaultCell = rows.get(key)!;
      const shown = /^`([^`]*)`/.exec(defaultCell)?.[1];
      if (shown === undefined || schema.default === undefined) continue;
      const expected =
        typeof schema.default === "object"
          ? JSON.stringify(schema.default)
          : String(schema.default);
      expect(shown.replace(/\s/g, ""), `default of ${key}`).toBe(expected.replace(/\s/g, ""));
    }
    const documentedOnly = [...rows.keys()].filter(
      (key) => !keys.some((setting) => setting.key === key),
    );
    expect(documentedOnly).toEqual([]);
  });

  it("shows a complete switchyard.yaml that equals the defaults", () => {
    const block = /## A complete `switchyard.yaml`[\s\S]*?```yaml\n([\s\S]*?)```/.exec(
      CONFIGURATION,
    )?.[1];
    expect(block).toBeDefined();
    const fromFile = parseYaml(block!) as Record<string, unknown>;
    const withFile = loadConfig({ env: { SWITCHYARD_CONFIG: "" }, overrides: fromFile });
    const without = loadConfig({ env: { SWITCHYARD_CONFIG: "" } });
    expect(withFile).toEqual(without);
    const missing = schemaKeys(ConfigSchema)
      .map((setting) => setting.key)
      .filter((key) => {
        let value: unknown = fromFile;
        for (const part of key.split(".")) value = (value as Record<string, unknown>)?.[part];
        return value === undefined;
      });
    // Settings without a default (a public URL, a fixed instance id) are shown commented out.
    expect(missing.filter((key) => !block!.includes(`# ${key.split(".").at(-1)}:`))).toEqual([]);
  });
});
