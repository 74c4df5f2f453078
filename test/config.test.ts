import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/index.ts";

function emptyDir(): string {
  return mkdtempSync(join(tmpdir(), "switchyard-config-"));
}

function dirWithConfig(yaml: string): string {
  const dir = emptyDir();
  writeFileSync(join(dir, "switchyard.yaml"), yaml);
  return dir;
}

function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("starts with no file and no environment on the documented defaults", () => {
    const config = loadConfig({ env: {}, cwd: emptyDir() });
    expect(config.server.host).toBe("127.0.0.1");
    expect(config.server.port).toBe(8080);
    expect(config.server.body_limit_bytes).toBe(10 * 1024 * 1024);
    expect(config.database_url).toMatch(/^data\/[\w-]+\.sqlite$/);
    expect(config.registration).toEqual({ enabled: true, signup_credit_micros: 0 });
    expect(config.log_level).toBe("info");
    expect(config.sandbox.mode).toBe("auto");
    expect(config.catalog).toEqual({ files: [], vendors: {}, models: [] });
  });

  it("takes PORT, HOST and DATABASE_URL from the environment", () => {
    const config = loadConfig({
      env: { PORT: "9090", HOST: "0.0.0.0", DATABASE_URL: "postgres://u:p@db:5432/switchyard" },
      cwd: emptyDir(),
    });
    expect(config.server.port).toBe(9090);
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.database_url).toBe("postgres://u:p@db:5432/switchyard");
  });

  it("lets the environment override the file", () => {
    const cwd = dirWithConfig(
      "server:\n  port: 7000\n  host: 10.0.0.1\ndatabase_url: /var/lib/switchyard/db.sqlite\n",
    );
    expect(loadConfig({ env: {}, cwd })).toMatchObject({
      server: { port: 7000, host: "10.0.0.1" },
      database_url: "/var/lib/switchyard/db.sqlite",
    });
    expect(loadConfig({ env: { PORT: "7001", DATABASE_URL: "other.sqlite" }, cwd })).toMatchObject({
      server: { port: 7001, host: "10.0.0.1" },
      database_url: "other.sqlite",
    });
  });

  it("reads the file named by SWITCHYARD_CONFIG", () => {
    const dir = dirWithConfig("registration:\n  enabled: false\n");
    const config = loadConfig({
      env: { SWITCHYARD_CONFIG: join(dir, "switchyard.yaml") },
      cwd: emptyDir(),
    });
    expect(config.registration.enabled).toBe(false);
  });

  it("refuses a non-numeric PORT, naming server.port", () => {
    const error = configError(() => loadConfig({ env: { PORT: "abc" }, cwd: emptyDir() }));
    expect(error.message).toContain("server.port");
    expect(error.message).toContain('"abc"');
  });

  it("refuses an out-of-range PORT, naming server.port", () => {
    const error = configError(() => loadConfig({ env: { PORT: "70000" }, cwd: emptyDir() }));
    expect(error.message).toContain("server.port");
  });

  it("refuses an unknown top-level key in switchyard.yaml, naming it", () => {
    const cwd = dirWithConfig("server:\n  port: 8081\ncolour: blue\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain("colour");
    expect(error.message).toContain(join(cwd, "switchyard.yaml"));
  });

  it("refuses an unknown nested key, naming its full path", () => {
    const cwd = dirWithConfig("server:\n  prot: 8081\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain("server.prot");
  });

  it("refuses a value of the wrong type, naming the key", () => {
    const cwd = dirWithConfig("registration:\n  signup_credit_micros: 1.5\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain("registration.signup_credit_micros");
    const level = configError(() => loadConfig({ env: { LOG_LEVEL: "chatty" }, cwd: emptyDir() }));
    expect(level.message).toContain("log_level");
  });

  it("refuses a file that is not YAML, naming the file", () => {
    const cwd = dirWithConfig("server: [unclosed\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain(join(cwd, "switchyard.yaml"));
  });

  it("refuses a file whose top level is not a mapping", () => {
    const cwd = dirWithConfig("- just\n- a list\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain(join(cwd, "switchyard.yaml"));
  });

  it("refuses a section that is not a mapping instead of dropping it", () => {
    const cwd = dirWithConfig("server: 8081\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain("server: Expected object");
    const withEnv = configError(() => loadConfig({ env: { HOST: "0.0.0.0" }, cwd }));
    expect(withEnv.message).toContain("server: Expected object");
  });

  it("refuses a file that is a bare scalar", () => {
    const cwd = dirWithConfig("just some words\n");
    const error = configError(() => loadConfig({ env: {}, cwd }));
    expect(error.message).toContain(join(cwd, "switchyard.yaml"));
  });

  it("names the environment variable a bad value came from", () => {
    const cwd = dirWithConfig("server:\n  port: 8081\n");
    const error = configError(() => loadConfig({ env: { PORT: "eighty" }, cwd }));
    expect(error.message).toContain('server.port: Expected integer (got "eighty")');
    expect(error.message).toContain("PORT");
  });

  it("reads SWITCHYARD_REGISTRATION as a boolean and refuses other words", () => {
    for (const [value, enabled] of [
      ["false", false],
      ["0", false],
      ["off", false],
      ["no", false],
      ["true", true],
      ["1", true],
    ] as const) {
      const config = loadConfig({ env: { SWITCHYARD_REGISTRATION: value }, cwd: emptyDir() });
      expect(config.registration.enabled, value).toBe(enabled);
    }
    const error = configError(() =>
      loadConfig({ env: { SWITCHYARD_REGISTRATION: "disabled" }, cwd: emptyDir() }),
    );
    expect(error.message).toContain("registration.enabled");
  });

  it("refuses a SWITCHYARD_CONFIG that does not exist", () => {
    const missing = join(emptyDir(), "nope.yaml");
    const error = configError(() =>
      loadConfig({ env: { SWITCHYARD_CONFIG: missing }, cwd: emptyDir() }),
    );
    expect(error.message).toContain(missing);
  });

  it("reads relative catalog files from the config file's directory", () => {
    const dir = dirWithConfig("catalog:\n  files: [extra-models.yaml, /opt/abs.yaml]\n");
    const config = loadConfig({
      env: { SWITCHYARD_CONFIG: join(dir, "switchyard.yaml") },
      cwd: emptyDir(),
    });
    expect(config.catalog.files).toEqual([join(dir, "extra-models.yaml"), "/opt/abs.yaml"]);
  });

  it("reads catalog additions from the file", () => {
    const cwd = dirWithConfig(
      [
        "catalog:",
        "  models:",
        "    - id: local-llama",
        "      endpoint: chat",
        "      family: llama",
        "      display_name: Local Llama",
        "      owned_by: self-hosted",
        "      pricing: { per_1m_tokens: { input: 0, output: 0 } }",
        "      routes:",
        "        - { vendor: local, adapter: openai-compatible, base_url: 'http://127.0.0.1:11434/v1', upstream_model: llama3.1 }",
        "",
      ].join("\n"),
    );
    const config = loadConfig({ env: {}, cwd });
    expect(config.catalog.models.map((model) => model.id)).toEqual(["local-llama"]);
  });

  it("accepts SQLite paths, sqlite: and file: forms and postgres:// URLs as database_url", () => {
    for (const url of [
      "data/switchyard.sqlite",
      "/var/lib/switchyard/db.sqlite",
      ":memory:",
      "sqlite:data/x.sqlite",
      "sqlite:///var/lib/x.sqlite",
      "file:data/x.sqlite",
      "file:///var/lib/x.sqlite",
      "postgres://u:p@db:5432/switchyard",
      "postgresql://db/switchyard",
    ]) {
      expect(loadConfig({ env: { DATABASE_URL: url }, cwd: emptyDir() }).database_url).toBe(url);
    }
  });

  it("refuses a database_url with any other scheme, naming the value and its source", () => {
    const typo = configError(() =>
      loadConfig({ env: { DATABASE_URL: "postgress://x" }, cwd: emptyDir() }),
    );
    expect(typo.message).toContain(
      "database_url: 'postgress://x' has the unknown scheme 'postgress://' from environment variable DATABASE_URL",
    );
    const mysql = configError(() =>
      loadConfig({ env: { DATABASE_URL: "mysql://root:hunter2@db/app" }, cwd: emptyDir() }),
    );
    expect(mysql.message).toContain("'mysql://root:***@db/app'");
    expect(mysql.message).not.toContain("hunter2");
    const fromFile = configError(() =>
      loadConfig({ env: {}, cwd: dirWithConfig("database_url: redis://cache:6379\n") }),
    );
    expect(fromFile.message).toMatch(/database_url: 'redis:\/\/cache:6379' has the unknown scheme/);
  });

  it("reads DATABASE_WAIT_SECONDS and SWITCHYARD_DRAIN_DELAY_SECONDS, with defaults", () => {
    const defaults = loadConfig({ env: {}, cwd: emptyDir() });
    expect(defaults.database_wait_seconds).toBe(30);
    expect(defaults.server.drain_delay_seconds).toBe(5);
    const set = loadConfig({
      env: { DATABASE_WAIT_SECONDS: "120", SWITCHYARD_DRAIN_DELAY_SECONDS: "0" },
      cwd: emptyDir(),
    });
    expect(set.database_wait_seconds).toBe(120);
    expect(set.server.drain_delay_seconds).toBe(0);
    const bad = configError(() =>
      loadConfig({ env: { DATABASE_WAIT_SECONDS: "soon" }, cwd: emptyDir() }),
    );
    expect(bad.message).toContain("from environment variable DATABASE_WAIT_SECONDS");
  });
});
