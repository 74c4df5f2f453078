import { describe, expect, it } from "vitest";
import { parseListenAddress } from "./metrics-listener.ts";
import { createPrometheusMetrics } from "./prometheus.ts";

/** The value of one sample line of the exposition (`name{labels} value`), or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split("\n").find((each) => each.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe("Prometheus metrics", () => {
  it("keeps each instance's numbers in its own registry", async () => {
    const one = createPrometheusMetrics({ version: "1.0.0" });
    const two = createPrometheusMetrics({ version: "1.0.0" });
    one.requestRefused("rpm");
    const line = 'switchyard_quota_rejections_total{kind="rpm"}';
    expect(sample((await one.render()).body, line)).toBe(1);
    expect(sample((await two.render()).body, line)).toBe(0);
  });

  it("sums charges in micro-USD and divides once, so the USD value is exact", async () => {
    const metrics = createPrometheusMetrics({ version: "1.0.0" });
    // 0.1 + 0.2 in floating point is 0.30000000000000004; 100000 + 200000 micros is not.
    for (const costMicros of [100_000, 200_000, 1, 1, 1])
      metrics.modelCallCompleted({
        endpoint: "/v1/chat/completions",
        model: "m",
        vendor: "v",
        stream: false,
        usage: undefined,
        costMicros,
      });
    const text = (await metrics.render()).body;
    expect(sample(text, 'switchyard_charged_usd_total{model="m",vendor="v"}')).toBe(0.300003);
  });

  it("maps values outside the closed sets to other and unmatched", async () => {
    const metrics = createPrometheusMetrics({ version: "1.0.0" });
    metrics.httpRequestStarted(undefined);
    metrics.httpRequestFinished({ method: "PROPFIND", route: undefined, status: 42, seconds: 0.1 });
    const text = (await metrics.render()).body;
    expect(
      sample(
        text,
        'http_server_request_duration_seconds_count{http_request_method="other",http_route="unmatched",http_response_status_code="other"}',
      ),
    ).toBe(1);
    expect(sample(text, 'http_server_active_requests{http_route="unmatched"}')).toBe(0);
  });

  it("reads a collected gauge at every scrape; a second one of the same name replaces it", async () => {
    const metrics = createPrometheusMetrics({ version: "1.0.0" });
    const line = 'switchyard_upstream_circuit_state{vendor="openai",route="0"}';
    expect(sample((await metrics.render()).body, line)).toBeUndefined();
    let state = 2;
    metrics.addCollectedGauge({
      name: "switchyard_upstream_circuit_state",
      help: "Circuit state per upstream route: 0 closed, 1 half-open, 2 open.",
      labelNames: ["vendor", "route"],
      read: () => [{ labels: { vendor: "openai", route: "0" }, value: state }],
    });
    expect(sample((await metrics.render()).body, line)).toBe(2);
    state = 1;
    expect(sample((await metrics.render()).body, line)).toBe(1);
  });

  it("reports the store down when its probe fails or hangs", async () => {
    const down = createPrometheusMetrics({
      version: "1.0.0",
      probeStore: () => new Promise(() => {}),
      probeTimeoutMs: 20,
    });
    expect(sample((await down.render()).body, "switchyard_store_up")).toBe(0);
    const failing = createPrometheusMetrics({
      version: "1.0.0",
      probeStore: () => Promise.reject(new Error("no")),
    });
    expect(sample((await failing.render()).body, "switchyard_store_up")).toBe(0);
    const up = createPrometheusMetrics({ version: "1.0.0", probeStore: async () => undefined });
    expect(sample((await up.render()).body, "switchyard_store_up")).toBe(1);
  });
});

describe("parseListenAddress", () => {
  it("reads host:port, [v6]:port and :port, and refuses anything else", () => {
    expect(parseListenAddress("127.0.0.1:9464")).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(parseListenAddress("[::1]:9464")).toEqual({ host: "::1", port: 9464 });
    expect(parseListenAddress(":9464")).toEqual({ host: "0.0.0.0", port: 9464 });
    for (const bad of ["9464", "localhost", "host:70000", "host:port", "[::1]"])
      expect(() => parseListenAddress(bad), bad).toThrow(/metrics.listen/);
  });
});
