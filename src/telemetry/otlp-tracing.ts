/**
 * @module telemetry/otlp-tracing
 * The concrete tracer, built by `src/main.ts` only when tracing is configured (`tracing.endpoint`
 * or `OTEL_EXPORTER_OTLP_ENDPOINT`): an SDK tracer provider with the gateway's resource
 * (`service.name`, `service.version`), a parent-based ratio sampler (a client's sampled flag is
 * followed; new traces are kept at `sample_ratio`) and a batch processor exporting over OTLP/HTTP
 * (`<endpoint>/v1/traces`). Tests hand in an exporter of their own (an in-memory one), which is
 * given a simple processor so finished spans are visible at once.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { GatewayTracer } from "./tracing.ts";

export interface TracingOptions {
  /** OTLP/HTTP base URL (`http://collector:4318`); `/v1/traces` is appended. */
  endpoint?: string | undefined;
  /** An exporter to use instead of OTLP (tests: `InMemorySpanExporter`). */
  exporter?: SpanExporter | undefined;
  serviceName: string;
  version: string;
  /** Share of new traces kept, 0–1; a client's sampled flag decides for its own traces. */
  sampleRatio: number;
}

export interface GatewayTracing {
  tracer: GatewayTracer;
  /** Exports what is still buffered and stops (at shutdown). */
  shutdown(): Promise<void>;
}

/** The OTLP/HTTP traces URL of a collector's base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT` is). */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}

export function createTracing(options: TracingOptions): GatewayTracing {
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(
        new OTLPTraceExporter(options.endpoint ? { url: tracesUrl(options.endpoint) } : {}),
      );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      "service.name": options.serviceName,
      "service.version": options.version,
    }),
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(options.sampleRatio),
    }),
    spanProcessors: [processor],
  });
  return {
    tracer: provider.getTracer("switchyard", options.version),
    shutdown: () => provider.shutdown(),
  };
}
