/**
 * Observability and the OpenAPI document against clients that leave early or send odd methods:
 * each test states the behaviour the docs (docs/observability.md, docs/metrics.md), the
 * OpenTelemetry HTTP and GenAI conventions or the API contract promise, and failed before its
 * fix.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const exporter = new InMemorySpanExporter();
let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ spanExporter: exporter });
});
afterAll(() => gateway.close());

async function spansOf(traceId: string, kind: SpanKind): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    if (spans.some((s) => s.kind === kind) || Date.now() > deadline) return spans;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function metricsText(): Promise<string> {
  return (await gateway.request("/metrics", { key: gateway.adminKey })).text();
}

describe("observability, hostile: spans of requests the client abandons", () => {
  it("marks the request span of a stream the client left mid-way as switchyard.aborted, with its charge", async () => {
    // Attack/failure: a client reads the first SSE chunk and hangs up. The request span is ended
    // in the `close` handler (src/http/tracing.ts), before the pipeline settles the partial
    // answer, so RequestTrace.completed() later writes onto an ended span and is dropped: the
    // trace of a billed, abandoned stream shows neither `switchyard.aborted` nor the tokens and
    // cost it was charged (docs/observability.md promises both).
    const traceId = "3bf92f3577b34da6a3ce929d0e0e4736";
    const abort = new AbortController();
    const response = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      signal: abort.signal,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      json: {
        model: "gpt-4o-mini",
        stream: true,
        messages: [{ role: "user", content: "[[sandbox:words=60]] [[sandbox:chunk-delay=50]] go" }],
      },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    const spans = await spansOf(traceId, SpanKind.SERVER);
    // Let the pipeline settle the partial answer (it is charged), as it does within milliseconds.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(server.attributes["switchyard.aborted"]).toBe(true);
    expect(server.attributes["switchyard.stream"]).toBe(true);
    expect(server.attributes["switchyard.cost_micros"]).toEqual(expect.any(Number));
  });

  it("ends the attempt span of a client that left before the answer with outcome aborted, as the metrics count it", async () => {
    // Attack/failure: a client disconnects while the upstream is still working. RequestTrace.end()
    // (src/telemetry/tracing.ts) ends the open attempt span bare and does not clear it, so the
    // later attemptEnded({outcome: "aborted"}) writes to an ended span: the CLIENT span carries no
    // `switchyard.outcome`, no `error.type` and an unset status, while
    // switchyard_upstream_attempts_total{outcome="aborted"} counts it. Traces and metrics disagree.
    const traceId = "2bf92f3577b34da6a3ce929d0e0e4736";
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    await gateway
      .request("/v1/chat/completions", {
        key: gateway.adminKey,
        signal: abort.signal,
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        json: {
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "[[sandbox:delay=1500]] x" }],
        },
      })
      .catch(() => undefined);
    await expect
      .poll(metricsText, { timeout: 5_000 })
      .toMatch(/switchyard_upstream_attempts_total\{[^}]*outcome="aborted"\} 1/);
    const spans = await spansOf(traceId, SpanKind.CLIENT);
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(server.attributes["http.response.status_code"]).toBe(499);
    const attempt = spans.find((span) => span.kind === SpanKind.CLIENT)!;
    expect(attempt.attributes["switchyard.outcome"]).toBe("aborted");
    expect(attempt.attributes["error.type"]).toBe("aborted");
    expect(attempt.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe("observability, hostile: HTTP semantic conventions", () => {
  it("records a method outside the HTTP verbs as _OTHER and names the span HTTP", async () => {
    // Attack: any client sends `PROPFIND` (or any of the ~30 other methods llhttp accepts). The
    // SERVER span is named `PROPFIND` and carries http.request.method="PROPFIND"; the HTTP
    // conventions (reference §1.4) require `_OTHER` and the span name `HTTP`, which keeps span
    // names and the method attribute a closed set (the metrics already map it to `other`).
    const response = await fetch(`${gateway.url}/v1/models`, {
      method: "PROPFIND",
      headers: { traceparent: "00-6bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    });
    expect(response.status).toBe(405);
    const spans = await spansOf("6bf92f3577b34da6a3ce929d0e0e4736", SpanKind.SERVER);
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(server.attributes["http.request.method"]).toBe("_OTHER");
    expect(server.name).toBe("HTTP");
  });
});

describe("observability, hostile: the OpenAPI document against the gateway", () => {
  type Doc = {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>
    >;
  };
  let doc: Doc;
  beforeAll(async () => {
    doc = (await (await gateway.request("/openapi.json")).json()) as Doc;
  });

  it("documents 202 for a video submission, the status the gateway answers", async () => {
    // A client generated from /openapi.json expects 200 for POST /v1/videos/generations; the
    // gateway (and spec §4.1) answers 202, which strict generated clients treat as undocumented.
    // Root cause: registerModelEndpoint (src/http/model-endpoint.ts) never passes successStatus.
    const response = await gateway.request("/v1/videos/generations", {
      key: gateway.adminKey,
      json: {
        model: "motion2.6-t2v",
        duration: 5,
        resolution: "720p",
        input: { prompt: "a lighthouse [[sandbox:video-seconds=0.2]]" },
      },
    });
    expect(response.status).toBe(202);
    const documented = Object.keys(doc.paths["/v1/videos/generations"]!.post!.responses);
    expect(documented).toContain("202");
  });

  it("documents the event stream a chat completion answers with stream: true", async () => {
    // The document says POST /v1/chat/completions answers only application/json, but with
    // `stream: true` (valid per the documented body) the gateway answers text/event-stream
    // (spec §4.1). Generated clients try to JSON-parse SSE.
    const response = await gateway.request("/v1/chat/completions", {
      key: gateway.adminKey,
      json: {
        model: "gpt-4o-mini",
        stream: true,
        messages: [{ role: "user", content: "[[sandbox:words=2]] hi" }],
      },
    });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await response.text();
    const success = doc.paths["/v1/chat/completions"]!.post!.responses["200"]!;
    expect(Object.keys(success.content ?? {})).toContain("text/event-stream");
  });
});
