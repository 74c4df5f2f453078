/**
 * docs/metrics.md and deploy/grafana/switchyard-dashboard.json against what a gateway exports:
 * every `switchyard_` and `http_server_` metric is documented with its type and labels, every
 * documented one is exported, and every metric the dashboard queries exists.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { type Exposition, parseExposition } from "./support/prometheus-text.ts";
import { REDIS_URL, testPrefix } from "./support/redis.ts";

const DOC = readFileSync(new URL("../docs/metrics.md", import.meta.url), "utf8");
const DASHBOARD = new URL("../deploy/grafana/switchyard-dashboard.json", import.meta.url);
const OWN = /^(switchyard_|http_server_)/;

/** Rows of the metrics table: name → type and labels. */
function documentedMetrics(): Map<string, { type: string; labels: string[] }> {
  const rows = new Map<string, { type: string; labels: string[] }>();
  for (const line of DOC.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const name = /^`([a-z_]+)`$/.exec(cells[1] ?? "")?.[1];
    if (!name || !OWN.test(name)) continue;
    const labels = [...(cells[3] ?? "").matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!);
    rows.set(name, { type: cells[2]!, labels });
  }
  return rows;
}

/** Label names a family's samples carry (without `le`). */
function labelsOf(exposition: Exposition, family: string): string[] {
  const names = new Set<string>();
  for (const sample of exposition.samples)
    if (sample.name === family || sample.name.startsWith(`${family}_`))
      for (const label of Object.keys(sample.labels)) if (label !== "le") names.add(label);
  return [...names].sort();
}

describe("metrics documentation and dashboard", () => {
  let gateway: TestGateway;
  let exposition: Exposition;

  beforeAll(async () => {
    // With Redis, so `switchyard_redis_up` is exported too.
    gateway = await startTestGateway({
      config: { redis: { url: REDIS_URL, key_prefix: testPrefix() } },
    });
    // One model request, so labelled families have a series whose labels can be compared.
    const answer = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: { model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "hi" }] },
    });
    await answer.text();
    const scraped = await gateway.request("/metrics", { key: gateway.adminKey });
    exposition = parseExposition(await scraped.text());
  });
  afterAll(() => gateway.close());

  it("documents every metric the gateway exports, with its type, and nothing else", () => {
    const documented = documentedMetrics();
    const exported = [...exposition.types.keys()].filter((name) => OWN.test(name));
    expect(exported.length).toBeGreaterThan(15);
    expect([...documented.keys()].sort()).toEqual(exported.sort());
    for (const name of exported)
      expect(documented.get(name)?.type, name).toBe(exposition.types.get(name));
  });

  it("documents the labels of every metric that has series", () => {
    for (const [name, { labels }] of documentedMetrics()) {
      const seen = labelsOf(exposition, name);
      if (seen.length === 0) continue;
      expect(seen, name).toEqual([...labels].sort());
    }
  });

  it("ships a Grafana dashboard that parses and queries only exported metrics", () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      title: string;
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    expect(dashboard.title).toBe("Switchyard");
    const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const families = new Set(exposition.types.keys());
    const used = new Set(
      exprs.flatMap((expr) =>
        [...expr.matchAll(/\b((?:switchyard|http_server|process|nodejs)_[a-z_]+)\b/g)].map(
          (match) => match[1]!,
        ),
      ),
    );
    const unknown = [...used].filter(
      (name) => !families.has(name) && !families.has(name.replace(/_(bucket|sum|count)$/, "")),
    );
    expect(unknown).toEqual([]);
    for (const needed of [
      "switchyard_requests_total",
      "http_server_request_duration_seconds_bucket",
      "switchyard_time_to_first_byte_seconds_bucket",
      "switchyard_tokens_total",
      "switchyard_charged_usd_total",
      "switchyard_upstream_attempts_total",
      "http_server_active_requests",
      "switchyard_quota_rejections_total",
      "switchyard_billing_holds_open",
      "switchyard_upstream_circuit_state",
    ])
      expect(used.has(needed), needed).toBe(true);
  });
});
