/**
 * What a reload reports as needing a restart. A worker of `start --workers` runs with
 * `billing.instance_id` suffixed (`<id>-w<n>`); its reload derives the file it reads again the
 * same way, so an unchanged file reports nothing, while a real change to a restart-only setting
 * (database, Redis, sandbox) is named and not applied.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { workerConfig } from "../src/cli/start-workers.ts";
import { loadConfig } from "../src/config/index.ts";
import { startGateway } from "../src/main.ts";
import { makeTempDir, removeTempDirs } from "./support/cli-process.ts";

afterAll(removeTempDirs);

const YAML = (extra = "") => `
database_url: ":memory:"
log_level: silent
server: { port: 0, host: 127.0.0.1, shutdown_grace_seconds: 1, drain_delay_seconds: 0 }
billing: { instance_id: gw }
${extra}
`;

describe("reload of a worker with billing.instance_id", () => {
  it("an unchanged file needs no restart", async () => {
    const file = join(makeTempDir("restart-"), "switchyard.yaml");
    writeFileSync(file, YAML());
    const env = { SWITCHYARD_CONFIG: file };
    const gateway = await startGateway({
      env,
      config: workerConfig(loadConfig({ env }), 1),
      print: () => {},
    });
    try {
      expect(gateway.services.config.billing.instance_id).toBe("gw-w1");
      expect(gateway.reload()).toEqual({ applied: [], needsRestart: [] });
    } finally {
      await gateway.close();
    }
  }, 30_000);

  it("control: database, redis and sandbox changes are named and not applied", async () => {
    const file = join(makeTempDir("restart-"), "switchyard.yaml");
    writeFileSync(file, YAML());
    const env = { SWITCHYARD_CONFIG: file };
    const gateway = await startGateway({ env, config: loadConfig({ env }), print: () => {} });
    try {
      writeFileSync(
        file,
        YAML("redis: { url: redis://127.0.0.1:1 }\nsandbox: { mode: never }").replace(
          '":memory:"',
          '"postgres://x@127.0.0.1:1/db"',
        ),
      );
      const outcome = gateway.reload();
      expect(outcome?.applied).toEqual([]);
      expect(outcome?.needsRestart.sort()).toEqual(["database_url", "redis.url", "sandbox.mode"]);
      expect(gateway.services.config.database_url).toBe(":memory:");
      expect(gateway.services.config.sandbox.mode).toBe("auto");
      const r = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${gateway.bootstrapKey}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(r.status).toBe(200);
    } finally {
      await gateway.close();
    }
  }, 30_000);
});
