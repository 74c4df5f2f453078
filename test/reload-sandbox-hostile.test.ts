/**
 * A reload of the demo (sandbox.mode auto, no credential named by the catalog) that adds a
 * vendor whose credential variable happens to be set. Whether the sandbox serves is decided at
 * start-up (`sandbox.*` and credentials take a restart; the sandbox was started or not then);
 * the reloaded catalog used to decide it again, and every shipped model stopped answering.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.ts";
import { startGateway } from "../src/main.ts";
import { makeTempDir, removeTempDirs } from "./support/cli-process.ts";
import { freshDatabase } from "./support/cluster.ts";
import { TEST_BACKEND } from "./support/gateway-harness.ts";
import { REDIS_URL, testPrefix } from "./support/redis.ts";

afterAll(removeTempDirs);

function configYaml(database: string, together: boolean): string {
  return `
database_url: ${JSON.stringify(database)}
${TEST_BACKEND === "postgres" ? `redis: { url: ${JSON.stringify(REDIS_URL)}, key_prefix: ${JSON.stringify(testPrefix())} }` : ""}
log_level: silent
server: { port: 0, host: 127.0.0.1, shutdown_grace_seconds: 1, drain_delay_seconds: 0 }
${
  together
    ? `catalog:
  vendors:
    together:
      adapter: openai-compatible
      base_url: http://127.0.0.1:9/v1
      credential_env: TOGETHER_API_KEY
      sandbox_path: /openai/v1
`
    : ""
}`;
}

describe("reload of the demo adding a vendor whose credential is set", () => {
  it("keeps the sandbox serving the shipped models (a sandbox/real switch takes a restart)", async () => {
    const database = TEST_BACKEND === "postgres" ? await freshDatabase() : undefined;
    const file = join(makeTempDir("flip-"), "switchyard.yaml");
    const url = database?.url ?? ":memory:";
    writeFileSync(file, configYaml(url, false));
    const env = { SWITCHYARD_CONFIG: file, TOGETHER_API_KEY: "tg-secret" };
    const gateway = await startGateway({ env, config: loadConfig({ env }), print: () => {} });
    try {
      const key = gateway.bootstrapKey as string;
      const chat = () =>
        fetch(`${gateway.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: "gpt-4o-mini",
            messages: [{ role: "user", content: "hi" }],
          }),
        });
      const before = await chat();
      expect(before.status).toBe(200);
      expect(before.headers.get("x-switchyard-sandbox")).toBe("true");
      writeFileSync(file, configYaml(url, true));
      const outcome = gateway.reload();
      expect(outcome).toBeDefined();
      const after = await chat();
      const text = await after.text();
      expect({ status: after.status, outcome }, text).toMatchObject({ status: 200 });
    } finally {
      await gateway.close();
      await database?.drop();
    }
  }, 30_000);
});
