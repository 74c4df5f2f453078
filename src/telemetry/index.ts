/**
 * @module telemetry
 * Metrics: the `GatewayMetrics` interface the rest of the gateway reports to, its inert default,
 * the Prometheus implementation and the separate scrape listener.
 */
export * from "./gateway-metrics.ts";
export * from "./metrics-listener.ts";
export * from "./prometheus.ts";
