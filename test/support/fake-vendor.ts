/**
 * A tiny stand-in for a vendor's HTTP API (node:http on 127.0.0.1, a free port) for adapter
 * tests that must see exactly what goes on the wire: every request is recorded (method, path,
 * headers, body text) and answered by the next canned answer the test queued.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface CannedAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is (to test bodies that are not JSON). */
  body?: unknown;
}

export interface FakeVendor {
  url: string;
  requests: RecordedRequest[];
  /** Queues answers, served in order; with none queued the server answers 500. */
  answer(...answers: CannedAnswer[]): void;
  close(): Promise<void>;
}

export async function startFakeVendor(): Promise<FakeVendor> {
  const requests: RecordedRequest[] = [];
  const queue: CannedAnswer[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => {
      requests.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(parts).toString("utf8"),
      });
      const next = queue.shift() ?? { status: 500, body: "no answer queued" };
      const text = typeof next.body === "string" ? next.body : JSON.stringify(next.body ?? {});
      response.writeHead(next.status ?? 200, {
        "content-type": typeof next.body === "string" ? "text/plain" : "application/json",
        ...next.headers,
      });
      response.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (...answers) => queue.push(...answers),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * A catalog chat model with one route to a fake vendor whose protocol `adapter` speaks
 * (`openai-compatible`: `baseUrl` ends in `/v1`; `anthropic`: the server's root).
 */
export function fakeChatModel(input: {
  id: string;
  baseUrl: string;
  adapter?: string;
  displayName?: string;
  upstreamModel?: string;
  pricesPer1m?: { input: number; output: number };
  capabilities?: Record<string, unknown>;
}) {
  return {
    id: input.id,
    endpoint: "chat",
    family: "test",
    display_name: input.displayName ?? input.id,
    owned_by: "switchyard",
    capabilities: input.capabilities ?? { max_output_tokens: 4_000 },
    pricing: { per_1m_tokens: input.pricesPer1m ?? { input: 1, output: 2 } },
    routes: [
      {
        vendor: `fake-${input.id}`,
        adapter: input.adapter ?? "openai-compatible",
        base_url: input.baseUrl,
        upstream_model: input.upstreamModel ?? "fake-1",
      },
    ],
  };
}

/** OpenAI chat stream chunks as SSE data frames, without the closing `[DONE]`. */
export function openAIFrames(chunks: readonly unknown[]): string {
  return chunks.map((item) => `data: ${JSON.stringify(item)}\n\n`).join("");
}

/** An OpenAI chat stream body: the chunks, then `[DONE]`. */
export function openAIStream(chunks: readonly unknown[]): string {
  return `${openAIFrames(chunks)}data: [DONE]\n\n`;
}

/** One OpenAI chat stream chunk of choice 0 (upstream model `fake-1`). */
export function openAIChunk(delta: Record<string, unknown>, finish: string | null = null) {
  return {
    id: "chatcmpl-x",
    object: "chat.completion.chunk",
    created: 1,
    model: "fake-1",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}
