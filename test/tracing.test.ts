/**
 * Traces and request ids through the public surface: a gateway with an in-memory span exporter
 * answers a request that falls back from one route to another, and the spans (the request's
 * SERVER span, one CLIENT span per attempt) join the client's `traceparent`; the sandbox (the
 * upstream) receives each attempt's `traceparent` and the request ids. A gateway without a
 * tracer passes a client's trace context on unchanged and adds none of its own.
 */
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const pricing = { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } };
const catalog = {
  files: [],
  vendors: {},
  models: [
    {
      id: "traced-chat",
      endpoint: "chat",
      family: "test",
      display_name: "traced-chat",
      owned_by: "switchyard",
      pricing,
      routes: [
        { vendor: "openai", upstream_model: "traced-first" },
        { vendor: "deepseek", upstream_model: "traced-second" },
      ],
    },
  ],
};

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

interface LoggedRequest {
  path: string;
  headers: Record<string, string | undefined>;
  body: { model?: string } | null;
}

/** What the sandbox received for one gateway request (by the `x-request-id` sent upstream). */
async function upstreamCallsOf(gateway: TestGateway, requestId: string) {
  const response = await fetch(`${gateway.sandboxUrl}/__sandbox/requests`);
  const { requests } = (await response.json()) as { requests: LoggedRequest[] };
  return requests.filter((entry) => entry.headers["x-request-id"] === requestId);
}

/** The spans of one trace, once its SERVER span has ended (it ends when the response closes). */
async function spansOf(exporter: InMemorySpanExporter, traceId: string): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const spans = exporter
      .getFinishedSpans()
      .filter((span) => span.spanContext().traceId === traceId);
    if (spans.some((span) => span.kind === SpanKind.SERVER) || Date.now() > deadline) return spans;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function chat(gateway: TestGateway, key: string, prompt: string, headers: HeadersInit = {}) {
  return gateway.request("/v1/chat/completions", {
    key,
    headers,
    json: { model: "traced-chat", messages: [{ role: "user", content: prompt }] },
  });
}

describe("tracing on", () => {
  const exporter = new InMemorySpanExporter();
  let gateway: TestGateway;
  let user: { accountId: string; key: string; keyId: string };

  beforeAll(async () => {
    gateway = await startTestGateway({ config: { catalog }, spanExporter: exporter });
    user = await createUser(gateway);
  });
  afterAll(() => gateway.close());

  it("makes a request span under the client's traceparent and a span per attempt", async () => {
    const response = await chat(
      gateway,
      user.key,
      "[[sandbox:status=503;fail-times=1;words=7]] traced fallback",
      {
        traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
        tracestate: "vendor=opaque",
        "x-request-id": "client-42.a:b_c",
      },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      usage: { prompt_tokens: number; completion_tokens: number; cost_micros: number };
    };
    const requestId = response.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^req_/);
    expect(response.headers.get("x-client-request-id")).toBe("client-42.a:b_c");

    const spans = await spansOf(exporter, TRACE_ID);
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(server).toBeDefined();
    expect(server.name).toBe("POST /v1/chat/completions");
    expect(server.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(server.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
      "switchyard.endpoint": "/v1/chat/completions",
      "switchyard.model": "traced-chat",
      "switchyard.account_id": user.accountId,
      "switchyard.key_id": user.keyId,
      "switchyard.request_id": requestId,
      "switchyard.client_request_id": "client-42.a:b_c",
      "switchyard.vendor": "deepseek",
      "gen_ai.usage.input_tokens": body.usage.prompt_tokens,
      "gen_ai.usage.output_tokens": 7,
      "switchyard.cost_micros": body.usage.cost_micros,
    });
    // The key itself is never recorded.
    expect(JSON.stringify(server.attributes)).not.toContain(user.key);

    const attempts = spans
      .filter((span) => span.kind === SpanKind.CLIENT)
      .sort(
        (a, b) =>
          Number(a.attributes["switchyard.attempt"]) - Number(b.attributes["switchyard.attempt"]),
      );
    expect(attempts.map((span) => span.name)).toEqual(["chat traced-first", "chat traced-second"]);
    for (const attempt of attempts)
      expect(attempt.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(attempts[0]!.attributes).toMatchObject({
      "gen_ai.provider.name": "openai",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "traced-first",
      "switchyard.attempt": 0,
      "switchyard.outcome": "server_error",
      "http.response.status_code": 503,
      "error.type": "server_error",
    });
    expect(attempts[1]!.attributes).toMatchObject({
      "gen_ai.provider.name": "deepseek",
      "gen_ai.request.model": "traced-second",
      "switchyard.attempt": 1,
      "switchyard.outcome": "ok",
    });
    expect(attempts[1]!.attributes["switchyard.latency_ms"]).toBeTypeOf("number");

    // Each upstream call carried its own attempt's span as the parent, and the request ids.
    const calls = await upstreamCallsOf(gateway, requestId);
    expect(calls.map((call) => call.body?.model)).toEqual(["traced-first", "traced-second"]);
    calls.forEach((call, index) => {
      expect(call.headers.traceparent).toBe(
        `00-${TRACE_ID}-${attempts[index]!.spanContext().spanId}-01`,
      );
      expect(call.headers.tracestate).toBe("vendor=opaque");
      expect(call.headers["x-client-request-id"]).toBe("client-42.a:b_c");
    });
  });

  it("starts a trace of its own without a traceparent, and ignores an invalid X-Request-Id", async () => {
    const response = await chat(gateway, user.key, "[[sandbox:words=3]] no parent", {
      "x-request-id": "not a valid id!",
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^req_/);
    expect(response.headers.get("x-client-request-id")).toBeNull();

    const [call] = await upstreamCallsOf(gateway, requestId);
    expect(call).toBeDefined();
    expect(call!.headers["x-client-request-id"]).toBeUndefined();
    const traceId = call!.headers.traceparent!.split("-")[1]!;
    const spans = await spansOf(exporter, traceId);
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.attributes["switchyard.client_request_id"]).toBeUndefined();
    expect(spans.filter((span) => span.kind === SpanKind.CLIENT)).toHaveLength(1);
  });

  it("keeps a valid X-Client-Request-Id and refuses one over 128 characters", async () => {
    const long = "a".repeat(129);
    const refused = await chat(gateway, user.key, "[[sandbox:words=2]] long id", {
      "x-request-id": long,
    });
    expect(refused.headers.get("x-client-request-id")).toBeNull();
    const kept = await chat(gateway, user.key, "[[sandbox:words=2]] client id", {
      "x-client-request-id": "a".repeat(128),
    });
    expect(kept.headers.get("x-client-request-id")).toBe("a".repeat(128));
  });

  it("ends the request span of a stream with its usage", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const response = await gateway.request("/v1/chat/completions", {
      key: user.key,
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      json: {
        model: "traced-chat",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "[[sandbox:words=5]] stream" }],
      },
    });
    expect(response.status).toBe(200);
    await response.text();
    const spans = await spansOf(exporter, traceId);
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(server.attributes).toMatchObject({
      "switchyard.stream": true,
      "gen_ai.usage.output_tokens": 5,
      "http.response.status_code": 200,
    });
    expect(spans.filter((span) => span.kind === SpanKind.CLIENT)).toHaveLength(1);
  });
});

describe("tracing on, video tasks", () => {
  const exporter = new InMemorySpanExporter();
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ spanExporter: exporter });
  });
  afterAll(() => gateway.close());

  it("traces a task's submission and sends its traceparent to the vendor", async () => {
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737";
    const response = await gateway.request("/v1/videos/generations", {
      key: gateway.adminKey,
      headers: { traceparent: `00-${traceId}-${PARENT_ID}-01` },
      json: {
        model: "motion2.6-t2v",
        duration: 5,
        resolution: "720p",
        input: { prompt: "a lighthouse at dusk [[sandbox:video-seconds=0.4]]" },
      },
    });
    expect(response.status).toBe(202);
    const spans = await spansOf(exporter, traceId);
    const server = spans.find((span) => span.kind === SpanKind.SERVER)!;
    const [attempt, ...others] = spans.filter((span) => span.kind === SpanKind.CLIENT);
    expect(others).toEqual([]);
    expect(attempt!.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(attempt!.attributes).toMatchObject({
      "gen_ai.operation.name": "generate_content",
      "gen_ai.output.type": "video",
      "switchyard.outcome": "ok",
    });
    const [call] = await upstreamCallsOf(gateway, response.headers.get("x-request-id")!);
    expect(call!.headers.traceparent).toBe(`00-${traceId}-${attempt!.spanContext().spanId}-01`);
  });
});

describe("tracing off", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ config: { catalog } });
  });
  afterAll(() => gateway.close());

  it("passes a client's trace context on unchanged, and adds none of its own", async () => {
    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    const traced = await chat(gateway, gateway.adminKey, "[[sandbox:words=2]] off, traced", {
      traceparent,
      tracestate: "vendor=opaque",
    });
    expect(traced.status).toBe(200);
    const [forwarded] = await upstreamCallsOf(gateway, traced.headers.get("x-request-id")!);
    expect(forwarded!.headers.traceparent).toBe(traceparent);
    expect(forwarded!.headers.tracestate).toBe("vendor=opaque");

    const plain = await chat(gateway, gateway.adminKey, "[[sandbox:words=2]] off, plain");
    const [call] = await upstreamCallsOf(gateway, plain.headers.get("x-request-id")!);
    expect(call).toBeDefined();
    expect(call!.headers.traceparent).toBeUndefined();
    expect(call!.headers.tracestate).toBeUndefined();
  });

  it("drops a malformed traceparent rather than passing it on", async () => {
    const response = await chat(gateway, gateway.adminKey, "[[sandbox:words=2]] off, bad", {
      traceparent: `00-${"0".repeat(32)}-${PARENT_ID}-01`,
    });
    const [call] = await upstreamCallsOf(gateway, response.headers.get("x-request-id")!);
    expect(call!.headers.traceparent).toBeUndefined();
  });
});
