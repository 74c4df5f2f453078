/**
 * @module telemetry
 * Metrics: the `GatewayMetrics` interface the rest of the gateway reports to, its inert default,
 * the Prometheus implementation and the separate scrape listener. Traces: `RequestTrace` over an
 * injected tracer (`tracing.ts`); the SDK tracer itself (`otlp-tracing.ts`) is imported by
 * `src/main.ts` alone, and only when tracing is on.
 */
export * from "./gateway-metrics.ts";
export * from "./metrics-listener.ts";
export * from "./prometheus.ts";
export * from "./tracing.ts";
