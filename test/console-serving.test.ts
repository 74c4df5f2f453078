/**
 * The gateway serves the console: `/` redirects to `/console/`, `index.html` is never cached,
 * hashed assets are cached for good, every answer forbids inline script through its CSP, any
 * page path answers `index.html`, and `console.enabled: false` leaves all of it 404.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_DIST } from "../src/http/console.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const assets = readdirSync(join(CONSOLE_DIST, "assets"));
const script = assets.find((name) => name.endsWith(".js"))!;
const style = assets.find((name) => name.endsWith(".css"))!;

describe("console serving", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("redirects / and /console to /console/", async () => {
    for (const path of ["/", "/console"]) {
      const response = await gateway.request(path, { redirect: "manual" });
      expect(response.status).toBe(302);
      expect(response.headers.get("location")).toBe("/console/");
    }
  });

  it("serves index.html uncached, with a CSP that forbids inline and foreign script", async () => {
    const response = await gateway.request("/console/");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await response.text();
    expect(html).toContain(`/console/assets/${script}`);
    expect(html).toContain(`/console/assets/${style}`);
  });

  it("serves hashed assets as immutable for a year, with their types", async () => {
    const js = await gateway.request(`/console/assets/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await gateway.request(`/console/assets/${style}`);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(css.headers.get("cache-control")).toContain("immutable");
  });

  it("answers index.html for the console's page paths, and 404 for a missing asset", async () => {
    for (const path of [
      "/console/keys",
      "/console/admin/audit",
      "/console/usage?from=2026-01-01",
    ]) {
      const response = await gateway.request(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(await response.text()).toContain('<div id="app"></div>');
    }
    const missing = await gateway.request("/console/assets/main-0000000000.js");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-security-policy")).toContain("default-src 'self'");
  });

  it("leaves the API as it was", async () => {
    const models = await gateway.request("/v1/models", { key: gateway.adminKey });
    expect(models.status).toBe(200);
    expect(models.headers.get("content-security-policy")).toBeNull();
  });
});

describe("console disabled", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ env: { SWITCHYARD_CONSOLE: "false" } });
  });
  afterAll(() => gateway.close());

  it("answers 404 at /, /console/ and its assets", async () => {
    for (const path of [
      "/",
      "/console",
      "/console/",
      `/console/assets/${script}`,
      "/console/keys",
    ]) {
      const response = await gateway.request(path, { redirect: "manual" });
      expect(response.status, path).toBe(404);
    }
  });
});
