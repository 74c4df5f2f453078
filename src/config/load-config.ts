/**
 * @module config/load-config
 * Reads `switchyard.yaml` (or the file named by `SWITCHYARD_CONFIG`), overlays environment
 * variables, fills defaults and validates. A bad setting stops the boot with a message that
 * names the key (and the environment variable it came from). Relative `catalog.files` are read
 * from the config file's directory.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { parse as parseYaml } from "yaml";
import { type Config, ConfigSchema } from "./schema.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;
type Plain = Record<string, unknown>;

/**
 * The mapping at `root[key]`, created when absent. A value that is not a mapping (`server: 8080`)
 * is left alone for the validator to report, rather than silently replaced.
 */
function section(root: Plain, key: string): Plain | undefined {
  const value = root[key];
  if (value === undefined || value === null) {
    const created: Plain = {};
    root[key] = created;
    return created;
  }
  return typeof value === "object" && !Array.isArray(value) ? (value as Plain) : undefined;
}

function envInteger(raw: string): number | string {
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

/** `true`/`false` and the usual spellings; anything else is kept so validation names it. */
function envBoolean(raw: string): boolean | string {
  const value = raw.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(value)) return true;
  if (["false", "0", "no", "off"].includes(value)) return false;
  return raw;
}

/** A decimal number (`0.25`); anything else is kept so validation names it. */
function envNumber(raw: string): number | string {
  return /^\d*\.?\d+$/.test(raw.trim()) ? Number(raw) : raw;
}

/** Environment variable → [section (or "" for the root), key, parser]. */
export const ENV_OVERRIDES: Record<string, [string, string, (raw: string) => unknown]> = {
  HOST: ["server", "host", String],
  PORT: ["server", "port", envInteger],
  PUBLIC_URL: ["server", "public_url", String],
  DATABASE_URL: ["", "database_url", String],
  DATABASE_WAIT_SECONDS: ["", "database_wait_seconds", envInteger],
  REDIS_URL: ["redis", "url", String],
  SWITCHYARD_DRAIN_DELAY_SECONDS: ["server", "drain_delay_seconds", envInteger],
  LOG_LEVEL: ["", "log_level", String],
  SWITCHYARD_SANDBOX_URL: ["sandbox", "url", String],
  SWITCHYARD_SANDBOX: ["sandbox", "mode", String],
  SWITCHYARD_REGISTRATION: ["registration", "enabled", envBoolean],
  SWITCHYARD_METRICS_TOKEN: ["metrics", "token", String],
  SWITCHYARD_METRICS_LISTEN: ["metrics", "listen", String],
  SWITCHYARD_CONSOLE: ["console", "enabled", envBoolean],
  OTEL_EXPORTER_OTLP_ENDPOINT: ["tracing", "endpoint", String],
  OTEL_SERVICE_NAME: ["tracing", "service_name", String],
  OTEL_TRACES_SAMPLER_ARG: ["tracing", "sample_ratio", envNumber],
};

/** Environment variables that override the file; returns which setting came from which. */
function applyEnv(raw: Plain, env: Env): Map<string, string> {
  const sources = new Map<string, string>();
  for (const [name, [sectionName, key, parse]] of Object.entries(ENV_OVERRIDES)) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    const target = sectionName === "" ? raw : section(raw, sectionName);
    if (!target) continue;
    target[key] = parse(value);
    sources.set(sectionName === "" ? key : `${sectionName}.${key}`, name);
  }
  return sources;
}

/** Schemes `database_url` may use; a plain path (no `scheme://`) is a SQLite file. */
const DATABASE_SCHEMES = ["postgres://", "postgresql://", "sqlite://", "file://"];

/**
 * The `scheme://` of a database URL Switchyard cannot open (`postgress://`, `mysql://`), which
 * would otherwise be taken for a SQLite file name and start a fresh, empty gateway.
 */
function unknownDatabaseScheme(url: string): string | undefined {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0];
  if (scheme !== undefined) return DATABASE_SCHEMES.includes(scheme) ? undefined : scheme;
  // A scheme without its `//` (`postgres:/…`, `postgresql:u@db/s`) is a typo too; `sqlite:`
  // and `file:` take a path, and one letter before the colon is a Windows drive.
  const bare = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(url)?.[1];
  if (bare === undefined || ["sqlite", "file"].includes(bare.toLowerCase())) return undefined;
  return `${bare}:`;
}

/** `scheme://user:password@…` with the password shown as `***`. */
function maskPassword(url: string): string {
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

/** The configuration file read: `SWITCHYARD_CONFIG`, else `switchyard.yaml` in `cwd`. */
export function configFilePath(env: Env, cwd = process.cwd()): string {
  return env.SWITCHYARD_CONFIG ?? `${cwd}/switchyard.yaml`;
}

export function loadConfig(
  options: {
    env?: Env;
    cwd?: string;
    overrides?: Plain;
    /** The file must exist (a reload of a gateway that started from one). */
    requireFile?: boolean;
  } = {},
): Config {
  const env = options.env ?? process.env;
  const path = configFilePath(env, options.cwd);
  let raw: Plain = {};
  const fromFile = existsSync(path);
  if (!fromFile && options.requireFile)
    throw new ConfigError(`${path}, which the gateway started from, cannot be read.`);
  if (fromFile) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(path, "utf8"));
    } catch (error) {
      throw new ConfigError(`${path} is not valid YAML: ${(error as Error).message}`);
    }
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== "object" || Array.isArray(parsed))
        throw new ConfigError(`${path} must be a mapping of settings (e.g. \`server:\`).`);
      raw = parsed as Plain;
    }
  } else if (env.SWITCHYARD_CONFIG) {
    throw new ConfigError(`SWITCHYARD_CONFIG names ${path}, which does not exist.`);
  }
  const envSources = applyEnv(raw, env);
  if (options.overrides)
    raw = Value.Default(ConfigSchema, { ...raw, ...options.overrides }) as Plain;
  const withDefaults = Value.Default(ConfigSchema, Value.Clone(raw));
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  const fromEnv = (key: string) => {
    const source = envSources.get(key);
    return source ? ` from environment variable ${source}` : "";
  };
  const lines = errors.slice(0, 5).map((error) => {
    const key = error.path.replace(/^\//, "").replaceAll("/", ".") || "(root)";
    const got = error.value === undefined ? "" : ` (got ${JSON.stringify(error.value)})`;
    return `  ${key}: ${error.message}${got}${fromEnv(key)}`;
  });
  const databaseUrl = (withDefaults as { database_url?: unknown }).database_url;
  const badScheme =
    typeof databaseUrl === "string" ? unknownDatabaseScheme(databaseUrl) : undefined;
  if (badScheme && lines.length < 5) {
    lines.push(
      `  database_url: '${maskPassword(databaseUrl as string)}' has the unknown scheme '${badScheme}'${fromEnv("database_url")}. Use a SQLite file path (data/switchyard.sqlite, sqlite:<path>, file:<path>) or postgres://user:password@host:5432/database.`,
    );
  }
  if (lines.length > 0) {
    const origin = fromFile ? `${path} and the environment` : "the environment";
    throw new ConfigError(`Invalid configuration in ${origin}:\n${lines.join("\n")}`);
  }
  const config = withDefaults as Config;
  if (fromFile)
    config.catalog.files = config.catalog.files.map((file) => resolve(dirname(path), file));
  return config;
}
