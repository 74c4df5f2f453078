/**
 * @module sandbox/signed-links
 * The signed, expiring links of the sandbox's result hosts (stand-ins for DashScope's OSS bucket
 * and OpenAI's blob store): `…/<file>?Expires=<unix>&OSSAccessKeyId=sandbox&Signature=<hmac>`.
 * Each sandbox server signs with its own secret, drawn at random when it starts, so a link can
 * neither be forged nor outlive the server; the signature check takes constant time. Like the
 * real hosts they are not the vendor API: a request with an `Authorization` header, a bad
 * signature or a link past its `Expires` is refused with an OSS-style XML error. The hosts'
 * clock can be moved forward (`POST /__sandbox/clock`) to test expiry.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

/** Furthest the result hosts' clock may be moved forward: ten years. */
export const MAX_CLOCK_ADVANCE_SECONDS = 10 * 365 * 24 * 60 * 60;

/** Signs and checks the result links of one sandbox server. */
export class LinkSigner {
  readonly #secret: Buffer;
  #offsetSeconds = 0;

  constructor(secret: Buffer = randomBytes(32)) {
    this.#secret = secret;
  }

  /** The result hosts' time, unix seconds (the real clock plus any advance). */
  nowSeconds(): number {
    return Math.floor(Date.now() / 1000) + this.#offsetSeconds;
  }

  /** Moves the clock forward by `seconds`; returns the total advance. */
  advance(seconds: number): number {
    this.#offsetSeconds = Math.min(MAX_CLOCK_ADVANCE_SECONDS, this.#offsetSeconds + seconds);
    return this.#offsetSeconds;
  }

  /** Back to the real clock. */
  resetClock(): void {
    this.#offsetSeconds = 0;
  }

  #signature(file: string, expires: number): string {
    return createHmac("sha256", this.#secret).update(`${file}\n${expires}`).digest("base64url");
  }

  /** The query string of a link to `file` that lives `ttlSeconds` from now. */
  signedQuery(file: string, ttlSeconds: number): { query: string; expires: number } {
    const expires = this.nowSeconds() + ttlSeconds;
    const signature = this.#signature(file, expires);
    return { query: `Expires=${expires}&OSSAccessKeyId=sandbox&Signature=${signature}`, expires };
  }

  /** True when `signature` (base64url) is this server's signature of `file` and `expires`. */
  verify(file: string, expires: number, signature: string): boolean {
    const given = Buffer.from(signature);
    const expected = Buffer.from(this.#signature(file, expires));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** The scheme and host the client used to reach the sandbox. */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? "127.0.0.1"}`;
}

export function ossError(reply: FastifyReply, status: number, code: string, message: string) {
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n  <Code>${code}</Code>\n` +
    `  <Message>${message}</Message>\n  <HostId>sandbox-results</HostId>\n</Error>\n`;
  return reply.code(status).type("application/xml").send(xml);
}

/**
 * Checks a download of `file`: no `Authorization`, a good signature, not expired. Answers the
 * OSS error and returns the reply when the download is refused; undefined when it may proceed.
 */
export function refuseDownload(
  request: FastifyRequest,
  reply: FastifyReply,
  links: LinkSigner,
  file: string,
): FastifyReply | undefined {
  if (request.headers.authorization !== undefined) {
    return ossError(reply, 400, "InvalidArgument", "Authorization header is invalid.");
  }
  const query = request.query as Record<string, string | undefined>;
  const expires = Number(query.Expires);
  const signature = query.Signature;
  if (!query.Expires || !Number.isSafeInteger(expires) || typeof signature !== "string") {
    return ossError(reply, 403, "AccessDenied", "AccessDenied");
  }
  if (!links.verify(file, expires, signature)) {
    return ossError(
      reply,
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided.",
    );
  }
  if (expires < links.nowSeconds()) {
    return ossError(reply, 403, "AccessDenied", "Request has expired.");
  }
  return undefined;
}
