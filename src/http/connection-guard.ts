/**
 * @module http/connection-guard
 * Keeps slow and refused clients from holding connections open:
 * - timeouts for receiving a request (headers, then the whole request with its body) and for
 *   idle keep-alive connections; they never apply to sending the answer, so long streams run on;
 * - an answer given before the body has arrived (a 401 from the key check, a 413 announced by
 *   `Content-Length`) carries `Connection: close`, and the connection is then closed in stages
 *   (RFC 9112 section 9.6): the gateway stops writing, reads and drops what the client still
 *   sends for a short linger so the client can read the answer, then cuts the connection;
 * - errors Node raises before a request exists (a timeout, oversized or malformed headers) are
 *   answered in the gateway's error shape rather than Fastify's.
 */
import { type ServerOptions, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../errors/index.ts";
import { renderError } from "./error-renderer.ts";

export interface ConnectionLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** How long a refused client may go on sending after its answer before it is cut off. */
export const LINGER_MS = 1000;

/**
 * The Fastify options that set the limits. The socket idle timeout (`connectionTimeout`) stays
 * off: it would also cut an answer that is slow to start (an upstream thinking for minutes).
 */
export function timeoutOptions(limits: ConnectionLimits): {
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionTimeout: number;
  http: ServerOptions;
} {
  const requestTimeout = limits.requestTimeoutMs;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = Math.min(limits.headersTimeoutMs, requestTimeout);
  return {
    requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: 0,
    http: {
      headersTimeout,
      requestTimeout,
      // Node checks the two timeouts on this period (30 s by default): a quarter of the shorter
      // one, between 100 ms and 1 s, so a timeout is enforced within a second of falling due.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
  };
}

/** Sockets whose request was answered before its body had arrived. */
const answeredEarly = new WeakSet<Socket>();

/**
 * Marks an error answer given before the whole request arrived: `Connection: close`, and the
 * close after it is staged. Node closes a `Connection: close` connection with `destroySoon()`
 * once the answer is flushed, which would reset it while the client is still sending, and a
 * reset can make the client lose the answer; this socket's `destroySoon` lingers instead.
 */
export function closeAfterEarlyAnswer(request: FastifyRequest, reply: FastifyReply): void {
  const socket = request.raw.socket;
  reply.header("connection", "close");
  if (answeredEarly.has(socket)) return;
  answeredEarly.add(socket);
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  };
}

function errorFor(code: string | undefined): GatewayError {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return new GatewayError("request_timeout");
  if (code === "HPE_HEADER_OVERFLOW") return new GatewayError("headers_too_large");
  return new GatewayError("invalid_request", { detail: "The request is not valid HTTP." });
}

/** Node's response in progress on the socket, as its own default client error handler reads it. */
function answerStarted(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })
    ._httpMessage;
  return current?.headersSent === true;
}

/**
 * The `clientError` handler: answers in the gateway's shape, unless an answer was already
 * written on this connection, and closes the connection.
 */
export function clientErrorHandler(
  newRequestId: () => string,
): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    if (!socket.writable || answeredEarly.has(socket) || answerStarted(socket)) {
      socket.destroy();
      return;
    }
    const requestId = newRequestId();
    const rendered = renderError(errorFor(error.code), "gateway", requestId);
    const body = JSON.stringify(rendered.body);
    // Written, then closed once flushed (or after the linger, if the client does not read).
    socket.end(
      `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status] ?? "Error"}\r\n` +
        "content-type: application/json; charset=utf-8\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
