/**
 * The folder rules of docs/architecture.md, checked on the source: which folder may import
 * which. A new import that breaks a rule fails here, not in review.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** `src/http/server.ts` → `http`; `src/main.ts` → `main`. */
function area(path: string): string {
  const [first] = relative(SRC, path).split("/");
  return first!.replace(/\.ts$/, "");
}

const imports = sourceFiles(SRC).flatMap((file) => {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)].map((match) => ({
    file: relative(SRC, file),
    from: area(file),
    to: area(resolve(dirname(file), match[1]!)),
  }));
});

/** What the core may build on: every service folder, no transport. */
const SERVICE_FOLDERS = [
  "auth",
  "billing",
  "catalog",
  "config",
  "errors",
  "limits",
  "providers",
  "spec",
  "store",
  "tasks",
  "telemetry",
  "routing",
];

/** Folders each folder may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  spec: [],
  errors: [],
  store: ["errors"],
  catalog: [],
  config: ["catalog"],
  auth: ["store", "errors"],
  billing: ["catalog", "spec", "store", "errors"],
  limits: ["store", "errors"],
  routing: ["catalog", "spec", "errors"],
  providers: ["spec", "catalog"],
  tasks: ["billing", "catalog", "spec", "store"],
  telemetry: ["spec"],
  core: SERVICE_FOLDERS,
  // The HTTP transport sees what the core sees, and the core.
  http: ["core", ...SERVICE_FOLDERS],
  endpoints: [
    "core",
    "http",
    "auth",
    "billing",
    "catalog",
    "routing",
    "spec",
    "store",
    "errors",
    "tasks",
  ],
  mcp: [
    "core",
    "auth",
    "billing",
    "catalog",
    "config",
    "errors",
    "store",
    "tasks",
    "endpoints",
    "http",
    "spec",
  ],
  ops: ["store", "errors", "config", "catalog", "core", "http"],
  sandbox: [],
};

describe("import rules", () => {
  it("found the sources", () => {
    expect(imports.length).toBeGreaterThan(100);
  });

  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    it(`${folder} imports only ${allowed.length ? allowed.join(", ") : "nothing outside itself"}`, () => {
      const violations = imports.filter(
        (entry) => entry.from === folder && entry.to !== folder && !allowed.includes(entry.to),
      );
      expect(violations).toEqual([]);
    });
  }

  it("only the composition root and the CLI refer to the sandbox", () => {
    const users = imports.filter((entry) => entry.to === "sandbox" && entry.from !== "sandbox");
    expect([...new Set(users.map((entry) => entry.from))].sort()).toEqual(["cli", "main"]);
  });
});
