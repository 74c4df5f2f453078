/**
 * @module sandbox/signed-links
 * The signed, expiring links of the sandbox's result hosts (stand-ins for DashScope's OSS bucket
 * and OpenAI's blob store): `…/<file>?Expires=<unix>&OSSAccessKeyId=sandbox&Signature=<hmac>`.
 * Like the real hosts they are not the vendor API: a request with an `Authorization` header, a
 * bad signature or a link past its `Expires` is refused with an OSS-style XML error.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

/** Fixed, so a test can sign a link itself (e.g. one that has already expired). */
const SECRET = "switchyard-sandbox-results";

export function linkSignature(file: string, expires: number): string {
  return createHmac("sha256", SECRET).update(`${file}\n${expires}`).digest("base64url");
}

/** The query string of a link to `file` that expires at `expires` (unix seconds). */
export function signedQuery(file: string, expires: number): string {
  return `Expires=${expires}&OSSAccessKeyId=sandbox&Signature=${linkSignature(file, expires)}`;
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

function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Checks a download of `file`: no `Authorization`, a good signature, not expired. Answers the
 * OSS error and returns the reply when the download is refused; undefined when it may proceed.
 */
export function refuseDownload(
  request: FastifyRequest,
  reply: FastifyReply,
  file: string,
): FastifyReply | undefined {
  if (request.headers.authorization !== undefined) {
    return ossError(reply, 400, "InvalidArgument", "Authorization header is invalid.");
  }
  const query = request.query as Record<string, string | undefined>;
  const expires = Number(query.Expires);
  if (!query.Expires || !Number.isInteger(expires) || !query.Signature) {
    return ossError(reply, 403, "AccessDenied", "AccessDenied");
  }
  if (!sameSignature(query.Signature, linkSignature(file, expires))) {
    return ossError(
      reply,
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided.",
    );
  }
  if (expires < Math.floor(Date.now() / 1000)) {
    return ossError(reply, 403, "AccessDenied", "Request has expired.");
  }
  return undefined;
}
