/**
 * @module http/session-cookie
 * The web console's login session as a cookie: `switchyard_session`, HttpOnly (scripts cannot
 * read it), SameSite=Strict (other sites' pages do not send it), Path=/v1, Secure when the
 * request came over HTTPS (directly, or `x-forwarded-proto` through a trusted proxy). The
 * cookie counts only on requests that also carry `x-switchyard-console: 1`: a form on another
 * site cannot set a header, and a script on another origin cannot send one without a CORS
 * preflight this gateway does not grant with credentials, so a forged request is anonymous.
 */
import type { FastifyReply, FastifyRequest } from "fastify";

export const SESSION_COOKIE = "switchyard_session";
export const CONSOLE_HEADER = "x-switchyard-console";

const SESSION_TOKEN = /^sess_[0-9A-Za-z]{20,200}$/;

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function readCookie(
  header: string | string[] | undefined,
  name: string,
): string | undefined {
  const text = Array.isArray(header) ? header.join("; ") : header;
  if (!text) return undefined;
  for (const pair of text.split(";")) {
    const equals = pair.indexOf("=");
    if (equals === -1) continue;
    if (pair.slice(0, equals).trim() !== name) continue;
    return pair
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
  }
  return undefined;
}

/** The session token of the console cookie, when the request may use it (see the module). */
export function consoleSessionToken(request: FastifyRequest): string | undefined {
  if (request.headers[CONSOLE_HEADER] !== "1") return undefined;
  const token = readCookie(request.headers.cookie, SESSION_COOKIE);
  return token !== undefined && SESSION_TOKEN.test(token) ? token : undefined;
}

function attributes(request: FastifyRequest, maxAgeSeconds: number): string {
  const secure = request.protocol === "https" ? "; Secure" : "";
  return `HttpOnly; SameSite=Strict; Path=/v1; Max-Age=${maxAgeSeconds}${secure}`;
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  maxAgeSeconds: number,
): void {
  reply.header("set-cookie", `${SESSION_COOKIE}=${token}; ${attributes(request, maxAgeSeconds)}`);
  reply.header("cache-control", "no-store");
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("set-cookie", `${SESSION_COOKIE}=; ${attributes(request, 0)}`);
}
