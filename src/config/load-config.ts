/**
 * @module config/load-config
 * Reads `switchyard.yaml` (or the file named by `SWITCHYARD_CONFIG`), overlays environment
 * variables, fills defaults and validates. A bad setting stops the boot with a message that
 * names the key.
 */
import { existsSync, readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import { parse as parseYaml } from "yaml";
import { type Config, ConfigSchema } from "./schema.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;
type Plain = Record<string, unknown>;

function section(root: Plain, key: string): Plain {
  const value = root[key];
  if (value && typeof value === "object" && !Array.isArray(value)) return value as Plain;
  const created: Plain = {};
  root[key] = created;
  return created;
}

function envInteger(env: Env, name: string): number | string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

/** Environment variables that override the file. */
function applyEnv(raw: Plain, env: Env): void {
  const server = section(raw, "server");
  if (env.HOST) server.host = env.HOST;
  const port = envInteger(env, "PORT");
  if (port !== undefined) server.port = port;
  if (env.PUBLIC_URL) server.public_url = env.PUBLIC_URL;
  if (env.DATABASE_URL) raw.database_url = env.DATABASE_URL;
  if (env.LOG_LEVEL) raw.log_level = env.LOG_LEVEL;
  if (env.SWITCHYARD_SANDBOX_URL) section(raw, "sandbox").url = env.SWITCHYARD_SANDBOX_URL;
  if (env.SWITCHYARD_SANDBOX) section(raw, "sandbox").mode = env.SWITCHYARD_SANDBOX;
  if (env.SWITCHYARD_REGISTRATION)
    section(raw, "registration").enabled = env.SWITCHYARD_REGISTRATION !== "false";
}

export function loadConfig(options: { env?: Env; cwd?: string; overrides?: Plain } = {}): Config {
  const env = options.env ?? process.env;
  const path = env.SWITCHYARD_CONFIG ?? `${options.cwd ?? process.cwd()}/switchyard.yaml`;
  let raw: Plain = {};
  if (existsSync(path)) {
    try {
      raw = (parseYaml(readFileSync(path, "utf8")) as Plain | null) ?? {};
    } catch (error) {
      throw new ConfigError(`${path} is not valid YAML: ${(error as Error).message}`);
    }
  } else if (env.SWITCHYARD_CONFIG) {
    throw new ConfigError(`SWITCHYARD_CONFIG names ${path}, which does not exist.`);
  }
  applyEnv(raw, env);
  if (options.overrides)
    raw = Value.Default(ConfigSchema, { ...raw, ...options.overrides }) as Plain;
  const withDefaults = Value.Default(ConfigSchema, Value.Clone(raw));
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  if (errors.length > 0) {
    const lines = errors.slice(0, 5).map((error) => {
      const key = error.path.replace(/^\//, "").replaceAll("/", ".") || "(root)";
      const got = error.value === undefined ? "" : ` (got ${JSON.stringify(error.value)})`;
      return `  ${key}: ${error.message}${got}`;
    });
    throw new ConfigError(
      `Invalid configuration in ${existsSync(path) ? path : "environment"}:\n${lines.join("\n")}`,
    );
  }
  return withDefaults as Config;
}
