/**
 * Slow and refused clients cannot hold connections: the headers and the whole request must
 * arrive within `server.headers_timeout_ms` / `server.request_timeout_ms` (408 in the gateway's
 * shape), an idle keep-alive connection is closed, and a request refused before its body arrived
 * (401 from the key check) has its connection closed about a second after the answer, however
 * slowly the client goes on sending. Answers that take long — streams, slow upstreams — are not
 * cut by these timeouts. Raw `node:net` sockets play the slow clients.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, expectInvalidKey } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const HEADERS_TIMEOUT_MS = 400;
const REQUEST_TIMEOUT_MS = 3000;
const KEEP_ALIVE_TIMEOUT_MS = 400;

interface SlowClient {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Milliseconds from the start until the first byte of the answer arrived. */
  answeredAt(): Promise<number>;
  /** Milliseconds from the start until the connection was gone (closed, reset or refused a write). */
  closedAt(): Promise<number>;
  /** Milliseconds from the start until the server stopped sending (FIN). */
  endedAt(): Promise<number>;
  stop(): void;
}

/**
 * Opens a connection, sends `head` at once and then `trickle` one byte every `everyMs`. The
 * socket is half-open, so the client keeps sending after the server's FIN: only the server
 * closing the connection (a reset or a refused write) ends it.
 */
function slowClient(url: string, head: string, trickle: string, everyMs: number): SlowClient {
  const { port, hostname } = new URL(url);
  const started = Date.now();
  const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
  let text = "";
  let answered: (at: number) => void = () => {};
  const answer = new Promise<number>((resolve) => {
    answered = resolve;
  });
  let gone: (at: number) => void = () => {};
  const closed = new Promise<number>((resolve) => {
    gone = resolve;
  });
  let ended: (at: number) => void = () => {};
  const end = new Promise<number>((resolve) => {
    ended = resolve;
  });
  socket.on("end", () => ended(Date.now() - started));
  let sent = 0;
  const timer = setInterval(() => {
    if (sent < trickle.length && !socket.destroyed) socket.write(trickle.charAt(sent++));
  }, everyMs);
  socket.on("data", (chunk: Buffer) => {
    if (text === "") answered(Date.now() - started);
    text += chunk.toString("utf8");
  });
  const finish = () => {
    clearInterval(timer);
    gone(Date.now() - started);
  };
  socket.on("error", finish);
  socket.on("close", finish);
  if (head) socket.write(head);
  return {
    socket,
    received: () => text,
    answeredAt: () => answer,
    closedAt: () => closed,
    endedAt: () => end,
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** Splits a raw HTTP/1.1 answer into its status, lower-cased headers and body. */
function parseAnswer(raw: string): { status: number; headers: Headers; body: string } {
  const [head = "", ...rest] = raw.split("\r\n\r\n");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n") };
}

function asResponse(raw: string): Response {
  const answer = parseAnswer(raw);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

function openConnections(gateway: TestGateway): Promise<number> {
  return new Promise((resolve, reject) =>
    gateway.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

const chatHead = (authorization: string, length: number) =>
  "POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\n" +
  `content-length: ${length}\r\nauthorization: ${authorization}\r\n\r\n`;

describe("slow clients", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: {
        server: {
          port: 0,
          host: "127.0.0.1",
          shutdown_grace_seconds: 1,
          headers_timeout_ms: HEADERS_TIMEOUT_MS,
          request_timeout_ms: REQUEST_TIMEOUT_MS,
          keep_alive_timeout_ms: KEEP_ALIVE_TIMEOUT_MS,
        },
      },
    });
    key = (await createUser(gateway)).key;
  });
  afterAll(() => gateway.close());

  it("closes the connection of a client that trickles its body after a 401", async () => {
    // 1 byte every 100 ms of a 10,000-byte body: it would take over 16 minutes to arrive.
    const client = slowClient(
      gateway.url,
      chatHead("Bearer sk-nope", 10_000),
      "x".repeat(10_000),
      100,
    );
    const answeredAt = await client.answeredAt();
    const closedAt = await client.closedAt();
    await expectInvalidKey(asResponse(client.received()));
    expect(parseAnswer(client.received()).headers.get("connection")).toBe("close");
    // Closed about a second after the answer (the linger), long before the request timeout.
    expect(closedAt - answeredAt).toBeLessThan(REQUEST_TIMEOUT_MS - 500);
    expect(closedAt - answeredAt).toBeGreaterThanOrEqual(500);
  });

  it("closes the connection of a refused non-model request the same way", async () => {
    const client = slowClient(
      gateway.url,
      "POST /v1/account/keys HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\n" +
        "content-length: 5000\r\nauthorization: Bearer sk-nope\r\n\r\n",
      "x".repeat(5000),
      100,
    );
    const answeredAt = await client.answeredAt();
    const closedAt = await client.closedAt();
    await expectInvalidKey(asResponse(client.received()));
    expect(closedAt - answeredAt).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it("answers 408 and closes when the headers do not arrive in time", async () => {
    const client = slowClient(
      gateway.url,
      "POST /v1/chat/completions HTTP/1.1\r\n",
      "host: gateway\r\ncontent-type: application/json\r\n",
      100,
    );
    const answeredAt = await client.answeredAt();
    await expectGatewayError(asResponse(client.received()), {
      status: 408,
      type: "invalid_request_error",
      code: "request_timeout",
      param: null,
    });
    expect(answeredAt).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(answeredAt).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
    expect(await client.closedAt()).toBeLessThan(answeredAt + 2000);
  });

  it("closes a connection that never sends anything", async () => {
    const client = slowClient(gateway.url, "", "", 1000);
    const answeredAt = await client.answeredAt();
    expect(parseAnswer(client.received()).status).toBe(408);
    expect(answeredAt).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
  });

  it("answers 408 and closes when an authenticated body does not arrive in time", async () => {
    const body = JSON.stringify({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "x".repeat(200) }],
    });
    const client = slowClient(gateway.url, chatHead(`Bearer ${key}`, body.length), body, 100);
    const answeredAt = await client.answeredAt();
    await expectGatewayError(asResponse(client.received()), {
      status: 408,
      type: "invalid_request_error",
      code: "request_timeout",
    });
    expect(answeredAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(answeredAt).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
    expect(await client.closedAt()).toBeLessThan(answeredAt + 2000);
  });

  it("closes an idle keep-alive connection", async () => {
    const client = slowClient(
      gateway.url,
      "GET /healthz HTTP/1.1\r\nhost: gateway\r\n\r\n",
      "",
      1000,
    );
    const answeredAt = await client.answeredAt();
    expect(parseAnswer(client.received()).status).toBe(200);
    const closedAt = await client.endedAt();
    expect(closedAt - answeredAt).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 50);
    expect(closedAt - answeredAt).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + 2000);
  });

  it("leaves no connection open once the slow clients are gone", async () => {
    const client = slowClient(gateway.url, chatHead("Bearer sk-nope", 1000), "x".repeat(1000), 50);
    await client.closedAt();
    const deadline = Date.now() + 2000;
    while ((await openConnections(gateway)) > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await openConnections(gateway)).toBe(0);
  });

  it("still gives a fast client that sends a large body with a bad key its 401", async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await gateway.request("/v1/chat/completions", {
        method: "POST",
        key: "sk-nope",
        headers: { "content-type": "application/json" },
        body: new Uint8Array(8 * 1024 * 1024).fill(0x20),
      });
      expect(response.headers.get("connection")).toBe("close");
      await expectInvalidKey(response);
    }
  });

  it("does not cut a stream that lasts longer than the request timeout", async () => {
    const started = Date.now();
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: {
        model: "gpt-4o-mini",
        stream: true,
        messages: [{ role: "user", content: "[[sandbox:chunk-delay=300;words=30]] slow" }],
      },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(Date.now() - started).toBeGreaterThan(REQUEST_TIMEOUT_MS + KEEP_ALIVE_TIMEOUT_MS);
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
  });

  it("does not cut an answer that is slow to start", async () => {
    const response = await gateway.request("/v1/chat/completions", {
      key,
      json: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "[[sandbox:delay=3600;words=3]] slow" }],
      },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
  });
});
