/**
 * @module http/console
 * Serves the web console (the built files of `console/dist`, see docs/console.md) at `/console/`,
 * and redirects `/` there. Hashed assets are cached for a year as immutable; `index.html` is
 * never cached, so a new build is picked up on the next load. Every answer carries a strict
 * Content-Security-Policy (no inline script, nothing from other origins but media the APIs name).
 * Any other path under `/console/` answers `index.html`, so the console's own links survive a
 * reload. The files are read once, at start-up.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";

/** Where `npm run console:build` writes the console. */
export const CONSOLE_DIST = fileURLToPath(new URL("../../console/dist/", import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: http: https:",
  "media-src 'self' blob: http: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

interface ConsoleFile {
  body: Buffer;
  type: string;
}

function readDist(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else
        files.set(path, {
          body: readFileSync(join(dir, path)),
          type: CONTENT_TYPES[extname(entry.name)] ?? "application/octet-stream",
        });
    }
  };
  walk("");
  return files;
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", CONSOLE_CSP)
    .header("x-content-type-options", "nosniff")
    .header("x-frame-options", "DENY")
    .header("referrer-policy", "no-referrer")
    .header("cross-origin-opener-policy", "same-origin");
}

/** Registers `/`, `/console` and `/console/*` when the console is enabled and built. */
export function registerConsole(
  app: FastifyInstance,
  options: { enabled: boolean; dir?: string },
): void {
  const dir = options.dir ?? CONSOLE_DIST;
  if (!options.enabled || !existsSync(join(dir, "index.html"))) return;
  const files = readDist(dir);
  const index = files.get("index.html")!;

  const sendIndex = (reply: FastifyReply) =>
    securityHeaders(reply).header("cache-control", "no-cache").type(index.type).send(index.body);

  app.get("/", (_request, reply) => reply.redirect("/console/", 302));
  app.get("/console", (_request, reply) => reply.redirect("/console/", 302));
  app.get("/console/", (_request, reply) => sendIndex(reply));
  app.get<{ Params: { "*": string } }>("/console/*", (request, reply) => {
    const path = request.params["*"];
    const file = path === "index.html" ? undefined : files.get(path);
    if (file) {
      return securityHeaders(reply)
        .header("cache-control", "public, max-age=31536000, immutable")
        .type(file.type)
        .send(file.body);
    }
    // A missing asset is a 404; any other path is one of the console's pages.
    if (path.startsWith("assets/")) {
      return securityHeaders(reply)
        .code(404)
        .header("cache-control", "no-store")
        .type("text/plain; charset=utf-8")
        .send("Not found");
    }
    return sendIndex(reply);
  });
}
