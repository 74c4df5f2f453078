/**
 * The deployment files — Dockerfile, .dockerignore, compose.yaml and deploy/ — checked against
 * the product they deploy: the variables and settings the gateway reads, the routes it serves,
 * the command `npm start` runs, the packages its sources import, and the service names that
 * compose and nginx must agree on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadCatalogData, SHIPPED_CATALOG_DIR } from "../src/catalog/index.ts";
import { type Config, ENV_OVERRIDES, loadConfig } from "../src/config/index.ts";
import { CONSOLE_DIST } from "../src/http/console.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { section, variablesOfTable } from "./support/markdown.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] };
  stop_grace_period?: string;
}

const compose = parseYaml(read("compose.yaml"), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const services = Object.entries(compose.services);
const named = (prefix: string) =>
  services.filter(([, service]) => service.image?.startsWith(prefix));
const gateways = services.filter(([, service]) => service.build !== undefined);
const [postgresName] = named("postgres:")[0] ?? [];
const [redisName] = named("redis:")[0] ?? [];
const [, lb] = named("nginx:")[0] ?? [];

/** What the gateway reads: the loader's table, the documented variables, the credentials. */
function variablesTheGatewayReads(): Set<string> {
  const credentials = Object.values(loadCatalogData({}).vendors).map(
    (vendor) => vendor.credential_env,
  );
  const documented = variablesOfTable(
    section(read("docs/configuration.md"), "## Environment variables"),
  );
  return new Set([...Object.keys(ENV_OVERRIDES), ...documented, ...credentials]);
}

/** Compose's `${NAME}`, `${NAME:-default}` and `${NAME-default}`, read from an empty shell. */
function interpolate(value: string): string {
  return value.replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_, _name, fallback?: string) =>
    fallback === undefined ? "" : fallback,
  );
}

function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [
      name,
      interpolate(String(value ?? "")),
    ]),
  );
}

/** The file of this repository a container path is mounted from (short volume syntax). */
function mountedFile(service: ComposeService, containerPath: string): string | undefined {
  for (const volume of service.volumes ?? []) {
    const [source, target] = volume.split(":");
    if (target === containerPath && source?.startsWith(".")) return join(ROOT, source);
  }
  return undefined;
}

/** The configuration a gateway service starts with: its environment and its mounted file. */
function configOf(service: ComposeService): Config {
  const env = environmentOf(service);
  if (env.SWITCHYARD_CONFIG !== undefined) {
    const file = mountedFile(service, env.SWITCHYARD_CONFIG);
    if (file === undefined)
      throw new Error(`${env.SWITCHYARD_CONFIG} is not mounted from this repository`);
    env.SWITCHYARD_CONFIG = file;
  }
  return loadConfig({ env, cwd: ROOT });
}

function seconds(duration: string | undefined): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration ?? "");
  if (!duration || !match) return 10; // Docker's default stop timeout
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

describe("compose.yaml", () => {
  it("runs PostgreSQL 16, Redis 7, two gateways and a load balancer", () => {
    expect(named("postgres:").map(([, service]) => service.image)).toEqual(["postgres:16"]);
    expect(named("redis:").map(([, service]) => service.image)).toEqual(["redis:7"]);
    expect(gateways).toHaveLength(2);
    expect(lb).toBeDefined();
  });

  it("starts each process only once what it needs is healthy", () => {
    for (const dependency of [postgresName!, redisName!])
      expect(compose.services[dependency]!.healthcheck?.test?.length).toBeGreaterThan(0);
    for (const [name, service] of gateways) {
      expect(service.depends_on?.[postgresName!]?.condition, name).toBe("service_healthy");
      expect(service.depends_on?.[redisName!]?.condition, name).toBe("service_healthy");
    }
    for (const [name] of gateways)
      expect(lb!.depends_on?.[name]?.condition, name).toBe("service_healthy");
    // On an empty database one instance creates the admin account before the other starts.
    const [first, second] = gateways;
    expect(second![1].depends_on?.[first![0]]?.condition).toBe("service_healthy");
  });

  it("sets only environment variables the gateway reads", () => {
    const known = variablesTheGatewayReads();
    for (const [name, service] of gateways) {
      const unknown = Object.keys(service.environment ?? {}).filter(
        (variable) => !known.has(variable),
      );
      expect(unknown, name).toEqual([]);
    }
  });

  it("gives each gateway a valid configuration on the shared PostgreSQL and Redis", () => {
    const configs = gateways.map(([, service]) => configOf(service));
    for (const [index, config] of configs.entries()) {
      const [name, service] = gateways[index]!;
      expect(new URL(config.database_url).protocol, name).toBe("postgres:");
      expect(new URL(config.database_url).hostname, name).toBe(postgresName);
      expect(new URL(environmentOf(service).REDIS_URL ?? "").hostname, name).toBe(redisName);
      expect(config.server.host, name).toBe("0.0.0.0");
      // Docker's SIGKILL must not cut the drain short.
      expect(seconds(service.stop_grace_period), name).toBeGreaterThan(
        config.server.drain_delay_seconds + config.server.shutdown_grace_seconds,
      );
    }
    const ids = configs.map((config) => config.billing.instance_id);
    expect(ids.every((id) => id !== undefined)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("deploy/nginx.conf", () => {
  const nginx = read("deploy/nginx.conf").replace(/#.*$/gm, "");
  const upstream = /upstream\s+(\S+)\s*\{([^}]*)\}/.exec(nginx);

  it("is the configuration the load balancer mounts", () => {
    expect(mountedFile(lb!, "/etc/nginx/nginx.conf")).toBe(join(ROOT, "deploy/nginx.conf"));
    const listen = /\blisten\s+(\d+)\s*;/.exec(nginx)?.[1];
    expect(lb!.ports?.map((port) => interpolate(port).split(":").at(-1))).toContain(listen);
  });

  it("balances over exactly the gateway services, on their port", () => {
    expect(upstream).not.toBeNull();
    expect(nginx).toContain(`proxy_pass http://${upstream![1]};`);
    const servers = [...upstream![2]!.matchAll(/\bserver\s+([\w.-]+):(\d+)/g)];
    expect(servers.map((server) => server[1]).sort()).toEqual(
      gateways.map(([name]) => name).sort(),
    );
    for (const [name, service] of gateways) {
      const port = String(configOf(service).server.port);
      expect(servers.find((server) => server[1] === name)?.[2], name).toBe(port);
    }
    expect(upstream![2]).not.toMatch(/\b(ip_hash|hash|least_conn|random)\b/); // round-robin
  });

  it("passes streams on as they come, and outlasts a silent upstream", () => {
    expect(nginx).toMatch(/\bproxy_buffering\s+off;/);
    expect(nginx).toMatch(/\bproxy_http_version\s+1\.1;/);
    const readTimeout = Number(/\bproxy_read_timeout\s+(\d+)s;/.exec(nginx)?.[1]);
    const config = loadConfig({ env: { SWITCHYARD_CONFIG: "" } });
    expect(readTimeout * 1000).toBeGreaterThan(config.upstream.first_byte_timeout_ms);
  });
});

/** The Dockerfile's instructions (continuations joined, comments dropped), per stage. */
function dockerStages(): string[][] {
  const instructions = read("Dockerfile")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const stages: string[][] = [];
  for (const instruction of instructions) {
    if (/^FROM\s/i.test(instruction)) stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

/** The arguments of an exec-form instruction (`CMD ["a", "b"]`). */
function execForm(instruction: string | undefined): string[] {
  return JSON.parse(instruction?.replace(/^\w+\s+/, "") ?? "[]") as string[];
}

/** Whether .dockerignore leaves `path` out of the build context (its patterns as globs). */
function dockerIgnored(): (path: string) => boolean {
  const patterns = read(".dockerignore")
    .split("\n")
    .map((line) => line.trim().replace(/^\/|\/$/g, ""))
    .filter((line) => line !== "" && !line.startsWith("#") && !line.startsWith("!"))
    .map((glob) => {
      const body = glob
        .split("**")
        .map((part) => part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
        .join(".*");
      return new RegExp(`^${body}(/|$)`);
    });
  return (path) => patterns.some((pattern) => pattern.test(path));
}

/** Every package imported by the files under `dir` that the gateway runs (tests excluded). */
function importedPackages(dir: string): Set<string> {
  const packages = new Set<string>();
  for (const entry of readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })) {
    if (!/\.(ts|js|mjs)$/.test(entry) || entry.endsWith(".test.ts")) continue;
    const text = readFileSync(join(ROOT, dir, entry), "utf8");
    const specifiers = [
      ...[...text.matchAll(/^\s*(?:import|export)\s+(type\s)?[^"';]*?from\s+"([^"]+)"/gm)]
        .filter((match) => match[1] === undefined)
        .map((match) => match[2]!),
      ...[...text.matchAll(/\b(?:import|require\.resolve)\(\s*"([^"]+)"/g)].map((m) => m[1]!),
    ];
    for (const specifier of specifiers) {
      if (specifier.startsWith(".") || specifier.startsWith("node:")) continue;
      const parts = specifier.split("/");
      packages.add(specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!);
    }
  }
  return packages;
}

describe("Dockerfile", () => {
  const stages = dockerStages();
  const runtime = stages.at(-1) ?? [];
  const find = (keyword: string) =>
    runtime.filter((instruction) => instruction.toUpperCase().startsWith(`${keyword} `));
  const pkg = JSON.parse(read("package.json")) as {
    scripts: { start: string };
    dependencies: Record<string, string>;
  };
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("installs with npm ci, then runs on a slim Node 20 image", () => {
    expect(stages.length).toBeGreaterThan(1);
    expect(stages.slice(0, -1).flat().join("\n")).toMatch(/\bnpm ci --omit=dev\b/);
    expect(runtime[0]).toMatch(/^FROM node:20-bookworm-slim\b/);
  });

  it("runs as a user other than root", () => {
    const user = find("USER").at(-1)?.split(/\s+/)[1];
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user!.split(":")[0]);
  });

  it("starts what `npm start` starts", () => {
    const command = [...execForm(find("ENTRYPOINT").at(-1)), ...execForm(find("CMD").at(-1))];
    expect(command.join(" ")).toBe(pkg.scripts.start);
  });

  it("copies the build, the catalog and the console the gateway reads, and ignores none", () => {
    const sources = (instructions: string[]) =>
      instructions
        .filter((instruction) => /^COPY\s/i.test(instruction) && !instruction.includes("--from="))
        .flatMap((instruction) => instruction.split(/\s+/).slice(1, -1));
    const needed = [
      "package.json",
      "bin",
      relative(ROOT, SHIPPED_CATALOG_DIR),
      relative(ROOT, CONSOLE_DIST).replace(/\/$/, ""),
    ];
    for (const path of needed) expect(sources(runtime), path).toContain(path);
    // dist/ comes from a stage that copies the sources and the build settings and runs the build.
    const fromBuild = find("COPY").find((instruction) =>
      /--from=\S+ \/app\/dist \.\/dist$/.test(instruction),
    );
    expect(fromBuild).toBeDefined();
    const stageName = /--from=(\S+)/.exec(fromBuild!)?.[1];
    const buildStage = stages.find((stage) => stage[0]?.endsWith(` AS ${stageName}`)) ?? [];
    const built = ["src", "scripts", "tsconfig.json", "tsconfig.build.json", "package-lock.json"];
    for (const path of built) expect(sources(buildStage), path).toContain(path);
    expect(buildStage.join("\n")).toMatch(/\bnpm ci\b(?! --omit)/);
    const ignored = dockerIgnored();
    for (const path of [...needed, ...built]) expect(ignored(path), path).toBe(false);
    expect(ignored("dist"), "a local dist/ never enters the build").toBe(true);
  });

  it("needs only production dependencies", () => {
    const imported = [...importedPackages("src"), ...importedPackages("bin")];
    expect(imported.length).toBeGreaterThan(10);
    expect(imported.filter((name) => pkg.dependencies[name] === undefined)).toEqual([]);
  });

  it("exposes the port the gateways listen on", () => {
    const exposed = find("EXPOSE").flatMap((instruction) => instruction.split(/\s+/).slice(1));
    const image = find("ENV").join(" ");
    expect(exposed).toEqual([/\bPORT=(\d+)/.exec(image)?.[1]]);
    for (const [name, service] of gateways)
      expect(exposed, name).toEqual([String(configOf(service).server.port)]);
  });

  it("checks health at a route the gateway serves", async () => {
    const check = find("HEALTHCHECK").at(-1);
    expect(check).toBeDefined();
    const path = /['"](\/[\w./-]*)['"]/.exec(check!)?.[1];
    expect(path).toBeDefined();
    const response = await gateway.request(path!);
    expect(response.status).toBe(200);
  });
});
