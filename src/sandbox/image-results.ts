/**
 * @module sandbox/image-results
 * The sandbox's stand-in for the vendors' result hosts (DashScope's OSS bucket, OpenAI's blob
 * store): `GET /__results/<id>.<ext>?Expires=<unix>&Signature=<hmac>`. Nothing is stored: the
 * id names the picture (size, seed, format, background), which is drawn again on each download.
 * Like the real hosts it is not the vendor API: a request with an `Authorization` header, a bad
 * signature or a link past its `Expires` is refused with an OSS-style XML error.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  MAX_SIDE,
  MEDIA_TYPES,
  type SynthFormat,
  type SynthSpec,
  synthesize,
} from "./image-synth.ts";

export const RESULTS_PREFIX = "/__results/";
/** DashScope's result links live 24 h. */
export const DASHSCOPE_RESULT_TTL_SECONDS = 24 * 60 * 60;
/** DALL·E 2 links live 60 minutes. */
export const OPENAI_RESULT_TTL_SECONDS = 60 * 60;

/** Fixed, so a test can sign a link itself (e.g. one that has already expired). */
const SECRET = "switchyard-sandbox-results";
const EXTENSIONS: Record<SynthFormat, string> = { png: "png", jpeg: "jpg", webp: "webp" };
const ID = /^img-(\d{1,4})x(\d{1,4})-([0-9a-f]{8})-([to])\.(png|jpg|webp)$/;

export interface ResultPicture extends SynthSpec {
  format: SynthFormat;
}

export function resultFileName(picture: ResultPicture): string {
  const seed = (picture.seed >>> 0).toString(16).padStart(8, "0");
  const background = picture.transparent ? "t" : "o";
  return `img-${picture.width}x${picture.height}-${seed}-${background}.${EXTENSIONS[picture.format]}`;
}

export function parseResultFileName(file: string): ResultPicture | undefined {
  const match = ID.exec(file);
  if (!match) return undefined;
  const [, width, height, seed, background, extension] = match;
  const format = extension === "jpg" ? "jpeg" : (extension as SynthFormat);
  return {
    width: Number(width),
    height: Number(height),
    seed: Number.parseInt(seed ?? "0", 16),
    transparent: background === "t",
    format,
  };
}

export function resultSignature(file: string, expires: number): string {
  return createHmac("sha256", SECRET).update(`${file}\n${expires}`).digest("base64url");
}

/** A signed link on `origin` (e.g. `http://127.0.0.1:8090`) to the picture. */
export function signResultUrl(
  origin: string,
  picture: ResultPicture,
  ttlSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const file = resultFileName(picture);
  const expires = nowSeconds + ttlSeconds;
  const query = `Expires=${expires}&OSSAccessKeyId=sandbox&Signature=${resultSignature(file, expires)}`;
  return `${origin}${RESULTS_PREFIX}${file}?${query}`;
}

/** The scheme and host the client used to reach the sandbox. */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? "127.0.0.1"}`;
}

function ossError(reply: FastifyReply, status: number, code: string, message: string) {
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

async function serveResult(request: FastifyRequest, reply: FastifyReply) {
  if (request.headers.authorization !== undefined) {
    return ossError(reply, 400, "InvalidArgument", "Authorization header is invalid.");
  }
  const { file } = request.params as { file: string };
  const query = request.query as Record<string, string | undefined>;
  const picture = parseResultFileName(file);
  if (!picture || picture.width > MAX_SIDE || picture.height > MAX_SIDE) {
    return ossError(reply, 404, "NoSuchKey", "The specified key does not exist.");
  }
  const expires = Number(query.Expires);
  if (!query.Expires || !Number.isInteger(expires) || !query.Signature) {
    return ossError(reply, 403, "AccessDenied", "AccessDenied");
  }
  if (!sameSignature(query.Signature, resultSignature(file, expires))) {
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
  const bytes = await synthesize(picture);
  return reply
    .code(200)
    .headers({ "content-type": MEDIA_TYPES[picture.format], "cache-control": "private" })
    .send(bytes);
}

export function registerImageResultRoutes(app: FastifyInstance): void {
  app.get(`${RESULTS_PREFIX}:file`, serveResult);
}
