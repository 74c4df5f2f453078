/**
 * @module test/support/gateway-harness
 * Starts a real gateway (HTTP on a free loopback port, the sandbox in process) for tests, with
 * the bootstrap admin key at hand. The store is SQLite in memory, or, with
 * `SWITCHYARD_TEST_BACKEND=postgres` (the second pass of `.ci/run`), a fresh PostgreSQL
 * database per gateway (dropped when it closes) with the quotas and change notifications in
 * Redis under a fresh key prefix: the same tests, on the scale-out engines.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { loadConfig } from "../../src/config/index.ts";
import { type RunningGateway, startGateway } from "../../src/main.ts";
import { freshDatabase } from "./cluster.ts";
import { REDIS_URL, testPrefix } from "./redis.ts";

/** `postgres` runs every test gateway on PostgreSQL and Redis; anything else on SQLite. */
export const TEST_BACKEND =
  process.env.SWITCHYARD_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";

export interface TestGateway extends RunningGateway {
  adminKey: string;
  /** `fetch` relative to the gateway's URL; `key` adds the bearer header. */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
}

export async function startTestGateway(
  options: {
    config?: Record<string, unknown>;
    env?: Record<string, string | undefined>;
    /** Receives the start-up banner's lines (dropped by default). */
    print?: (line: string) => void;
    /** Turns tracing on, with spans exported here (an `InMemorySpanExporter`). */
    spanExporter?: SpanExporter;
  } = {},
): Promise<TestGateway> {
  const cwd = mkdtempSync(join(tmpdir(), "switchyard-test-"));
  const env = { ...options.env };
  // A test that names its own database keeps it; the others follow the backend of the run.
  const database =
    TEST_BACKEND === "postgres" && options.config?.database_url === undefined
      ? await freshDatabase()
      : undefined;
  const config = loadConfig({
    env,
    cwd,
    overrides: {
      database_url: database?.url ?? ":memory:",
      ...(database ? { redis: { url: REDIS_URL, key_prefix: testPrefix() } } : {}),
      log_level: "silent",
      server: { port: 0, host: "127.0.0.1", shutdown_grace_seconds: 1 },
      // Tests inject upstream failures on purpose, many to one route; breakers would turn the
      // later ones into 503s. The breaker's own tests (test/upstream-health.test.ts) enable it.
      routing: { circuit_breaker: { enabled: false } },
      ...options.config,
    },
  });
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      env,
      config,
      print: options.print ?? (() => {}),
      ...(options.spanExporter ? { spanExporter: options.spanExporter } : {}),
    });
  } catch (error) {
    await database?.drop();
    throw error;
  }
  if (!gateway.bootstrapKey) throw new Error("expected a bootstrap key on an empty database");
  const adminKey = gateway.bootstrapKey;
  return {
    ...gateway,
    async close(closeOptions) {
      await gateway.close(closeOptions);
      await database?.drop();
    },
    adminKey,
    request: requestsTo(gateway.url),
  };
}

/** `fetch` relative to `baseUrl`; `key` adds the bearer header, `json` a JSON body (POST). */
export function requestsTo(baseUrl: string): TestGateway["request"] {
  return (path, init = {}) => {
    const { key, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key) headers.set("authorization", `Bearer ${key}`);
    if (json !== undefined) headers.set("content-type", "application/json");
    return fetch(baseUrl + path, {
      ...rest,
      headers,
      ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? "POST" } : {}),
    });
  };
}

/** Creates a user account with a balance and returns its id and first key. */
export async function createUser(
  gateway: TestGateway,
  input: { email?: string; balanceMicros?: number; keyOptions?: Record<string, unknown> } = {},
): Promise<{ accountId: string; key: string; keyId: string }> {
  const email = input.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`;
  const account = await gateway.request("/v1/admin/accounts", {
    key: gateway.adminKey,
    json: { email, balance_micros: input.balanceMicros ?? 10_000_000 },
  });
  if (account.status !== 201)
    throw new Error(`account create failed: ${account.status} ${await account.text()}`);
  const { id } = (await account.json()) as { id: string };
  const created = await gateway.request(`/v1/admin/accounts/${id}/keys`, {
    key: gateway.adminKey,
    json: input.keyOptions ?? {},
  });
  if (created.status !== 201)
    throw new Error(`key create failed: ${created.status} ${await created.text()}`);
  const body = (await created.json()) as { key: string; id: string };
  return { accountId: id, key: body.key, keyId: body.id };
}

/** The balance of the account `key` belongs to, as `GET /v1/account/balance` reads it. */
export async function balanceOf(gateway: TestGateway, key: string): Promise<number> {
  const response = await gateway.request("/v1/account/balance", { key });
  return ((await response.json()) as { balance_micros: number }).balance_micros;
}
