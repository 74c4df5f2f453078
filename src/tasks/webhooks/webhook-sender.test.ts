import { once } from "node:events";
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { nextAttemptDelayMs, type WebhookAttempt } from "./webhook-schedule.ts";
import { deliverWebhook, type WebhookDelivery } from "./webhook-sender.ts";
import { verifyWebhookSignature } from "./webhook-signature.ts";
import {
  checkWebhookUrl,
  STRICT_WEBHOOK_POLICY,
  type WebhookResolver,
} from "./webhook-url-guard.ts";

const SECRET = "whsec_test_5c2f0e";
const BODY = JSON.stringify({ id: "vid_abc", object: "video.generation", status: "succeeded" });
const LOOPBACK = { allowLoopback: true, allowPrivate: false };

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What the receiver does with one request (the default answers 204). */
type Answer = (response: ServerResponse) => void;

interface Receiver {
  url: string;
  port: number;
  received: Received[];
  connections: number;
  /** Resolves when a connection the receiver accepted has closed. */
  closed: Promise<void>;
  answers: Answer[];
  server: Server;
}

const receivers: Server[] = [];
afterEach(async () => {
  for (const server of receivers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function startReceiver(answers: Answer[] = []): Promise<Receiver> {
  let markClosed!: () => void;
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    connections: 0,
    closed: new Promise<void>((resolve) => {
      markClosed = resolve;
    }),
    answers,
    server: createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      receiver.received.push({
        method: request.method!,
        url: request.url!,
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      const answer = receiver.answers.shift() ?? ((reply) => reply.writeHead(204).end());
      answer(response);
    }),
  };
  receiver.server.on("connection", (socket) => {
    receiver.connections += 1;
    socket.on("close", markClosed);
  });
  receivers.push(receiver.server);
  receiver.server.listen(0, "127.0.0.1");
  await once(receiver.server, "listening");
  receiver.port = (receiver.server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/video?source=switchyard`;
  return receiver;
}

function delivery(url: string, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    url,
    body: BODY,
    secret: SECRET,
    eventId: "evt_vid_abc",
    policy: LOOPBACK,
    ...overrides,
  };
}

const status =
  (code: number): Answer =>
  (response) =>
    response.writeHead(code).end("nope");

/** Answers `code` with a body that never ends (16 KiB chunks, as fast as the client reads). */
const endless =
  (code: number): Answer =>
  (response) => {
    response.writeHead(code, { "content-type": "text/plain" });
    const chunk = Buffer.alloc(16 * 1024, "x");
    const pump = () => {
      while (!response.destroyed && response.write(chunk));
      if (!response.destroyed) response.once("drain", pump);
    };
    pump();
  };

describe("deliverWebhook", () => {
  it("POSTs the body signed, with the event id, the JSON type and its user agent", async () => {
    const receiver = await startReceiver();
    const now = Date.now();
    const result = await deliverWebhook(delivery(receiver.url, { now: () => now }));

    expect(result).toMatchObject({ ok: true, status: 204, at: new Date(now).toISOString() });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request!.method).toBe("POST");
    expect(request!.url).toBe("/hooks/video?source=switchyard");
    expect(request!.body.toString("utf8")).toBe(BODY);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["user-agent"]).toBe("Switchyard-Webhooks/1");
    expect(request!.headers["switchyard-event-id"]).toBe("evt_vid_abc");
    expect(request!.headers.host).toBe(`127.0.0.1:${receiver.port}`);
    const signature = request!.headers["switchyard-signature"] as string;
    expect(signature).toMatch(new RegExp(`^t=${Math.floor(now / 1000)},v1=[0-9a-f]{64}$`));
    expect(verifyWebhookSignature(SECRET, request!.body, signature)).toBe(true);
    expect(verifyWebhookSignature("whsec_other", request!.body, signature)).toBe(false);
  });

  it("gets the event through on the third attempt to a receiver that fails twice", async () => {
    const receiver = await startReceiver([status(500), status(500)]);
    const fast = { baseDelayMs: 5, factor: 2, maxDelayMs: 50, jitter: 0.1, giveUpAfterMs: 10_000 };
    const attempts: WebhookAttempt[] = [];
    for (;;) {
      const { ok, ...attempt } = await deliverWebhook(delivery(receiver.url));
      attempts.push(attempt);
      if (ok || attempts.length === 5) break;
      await new Promise((resolve) =>
        setTimeout(resolve, nextAttemptDelayMs(attempts.length, fast)),
      );
    }

    expect(attempts.map(({ status, error }) => ({ status, error }))).toEqual([
      { status: 500, error: "receiver answered HTTP 500" },
      { status: 500, error: "receiver answered HTTP 500" },
      { status: 204, error: undefined },
    ]);
    expect(receiver.received).toHaveLength(3);
    for (const request of receiver.received) {
      expect(request.body.toString("utf8")).toBe(BODY);
      expect(request.headers["switchyard-event-id"]).toBe("evt_vid_abc");
      const signature = request.headers["switchyard-signature"] as string;
      expect(verifyWebhookSignature(SECRET, request.body, signature)).toBe(true);
    }
  });

  it("gives up on a receiver that does not answer in time", async () => {
    const receiver = await startReceiver([() => {}]);
    const result = await deliverWebhook(delivery(receiver.url, { timeoutMs: 300 }));
    expect(result).toMatchObject({ ok: false, error: "timed out after 300 ms" });
    expect(result.status).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(3000);
    await receiver.closed;
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    const receiver = await startReceiver([
      (response) => response.writeHead(307, { location: "/elsewhere" }).end(),
    ]);
    const result = await deliverWebhook(delivery(receiver.url));
    expect(result).toMatchObject({
      ok: false,
      status: 307,
      error: "receiver answered HTTP 307 (redirects are not followed)",
    });
    expect(receiver.received.map((request) => request.url)).toEqual([
      "/hooks/video?source=switchyard",
    ]);
  });

  it("reads no more than 64 KiB of an answer that never ends", async () => {
    const receiver = await startReceiver([endless(200), endless(500)]);
    const success = await deliverWebhook(delivery(receiver.url, { timeoutMs: 5000 }));
    expect(success).toMatchObject({ ok: true, status: 200 });
    expect(success.durationMs).toBeLessThan(5000);
    const failure = await deliverWebhook(delivery(receiver.url, { timeoutMs: 5000 }));
    expect(failure).toMatchObject({ ok: false, status: 500, error: "receiver answered HTTP 500" });
    expect(failure.durationMs).toBeLessThan(5000);
  });

  it("refuses a loopback receiver before connecting when the policy does not allow loopback", async () => {
    const receiver = await startReceiver();
    const result = await deliverWebhook(delivery(receiver.url, { policy: STRICT_WEBHOOK_POLICY }));
    expect(result.ok).toBe(false);
    expect(result.status).toBeUndefined();
    expect(result.error).toBe(
      "refused: webhook_url's host is a loopback address; webhooks are only delivered to public addresses.",
    );
    expect(receiver.connections).toBe(0);
  });

  it("connects to the address it checked and keeps the URL's host name in Host", async () => {
    const receiver = await startReceiver();
    // `receiver.test` exists only in this resolver: the request arrives only if the connection
    // goes to the checked address rather than to a fresh lookup.
    const resolve: WebhookResolver = async () => [{ address: "127.0.0.1", family: 4 }];
    const url = `http://receiver.test:${receiver.port}/hook`;
    const result = await deliverWebhook(delivery(url, { resolve }));
    expect(result).toMatchObject({ ok: true, status: 204 });
    expect(receiver.received[0]!.headers.host).toBe(`receiver.test:${receiver.port}`);
  });

  it("checks again at delivery: a name that now resolves to loopback is refused (DNS rebinding)", async () => {
    const receiver = await startReceiver();
    const lookups: string[] = [];
    const rebinding: WebhookResolver = async (hostname) => {
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? "93.184.215.14" : "127.0.0.1", family: 4 }];
    };
    const url = `http://rebind.test:${receiver.port}/hook`;
    await checkWebhookUrl(url, STRICT_WEBHOOK_POLICY, { resolve: rebinding });

    const result = await deliverWebhook(
      delivery(url, { policy: STRICT_WEBHOOK_POLICY, resolve: rebinding }),
    );
    expect(lookups).toEqual(["rebind.test", "rebind.test"]);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^refused: .*'rebind.test' resolves to a loopback address/);
    expect(receiver.connections).toBe(0);
  });

  it("counts a lookup that outlasts the timeout as a timed-out attempt", async () => {
    const hanging: WebhookResolver = () => new Promise(() => {});
    const result = await deliverWebhook(
      delivery("http://slow-dns.test/hook", { resolve: hanging, timeoutMs: 100 }),
    );
    expect(result).toMatchObject({ ok: false, error: "timed out after 100 ms" });
  });

  it("reports a refused connection", async () => {
    const receiver = await startReceiver();
    receiver.server.close();
    await once(receiver.server, "close");
    const result = await deliverWebhook(delivery(receiver.url));
    expect(result.ok).toBe(false);
    expect(result.status).toBeUndefined();
    expect(result.error).toMatch(/^connection failed: .*ECONNREFUSED/);
  });
});
