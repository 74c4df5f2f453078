/**
 * @module sandbox/speech-results
 * The sandbox's stand-in for DashScope's result host (object storage): synthesized WAV files
 * kept in memory for a while, served under signed, expiring URLs. Like the real host it is not
 * DashScope, so a request that carries an `Authorization` header is refused, and an expired
 * link is refused with an OSS-style XML error.
 */
import { createHash, randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

export const RESULT_PREFIX = "/dashscope-results/tts/";
/** Result links live 24 h, as DashScope's do. */
export const RESULT_TTL_SECONDS = 24 * 60 * 60;
const CAPACITY = 64;
const MAX_BYTES = 128 * 1024 * 1024;

export interface StoredResult {
  url: string;
  id: string;
  expiresAt: number;
}

function signature(id: string, expires: number): string {
  return createHash("sha256").update(`switchyard-sandbox:${id}:${expires}`).digest("base64url");
}

function ossError(reply: FastifyReply, status: number, code: string, message: string) {
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n  <Code>${code}</Code>\n` +
    `  <Message>${message}</Message>\n  <HostId>sandbox-oss</HostId>\n</Error>\n`;
  return reply.code(status).type("application/xml").send(xml);
}

/** A bounded in-memory store of WAV files (oldest dropped first). */
export class SpeechResultStore {
  #files = new Map<string, { bytes: Buffer; expires: number }>();
  #bytes = 0;

  /** Keeps the file and returns the link to it on the host the request came to. */
  put(bytes: Buffer, origin: string, nowSeconds = Math.floor(Date.now() / 1000)): StoredResult {
    const id = randomUUID().replaceAll("-", "");
    const expires = nowSeconds + RESULT_TTL_SECONDS;
    this.#files.set(id, { bytes, expires });
    this.#bytes += bytes.length;
    for (const [oldest, file] of this.#files) {
      if (this.#files.size <= CAPACITY && this.#bytes <= MAX_BYTES) break;
      this.#files.delete(oldest);
      this.#bytes -= file.bytes.length;
    }
    const query = `Expires=${expires}&OSSAccessKeyId=sandbox&Signature=${signature(id, expires)}`;
    return { id, expiresAt: expires, url: `${origin}${RESULT_PREFIX}${id}.wav?${query}` };
  }

  serve(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    if (request.headers.authorization !== undefined) {
      return ossError(reply, 400, "InvalidArgument", "Authorization header is invalid.");
    }
    const { file } = request.params as { file: string };
    const query = request.query as Record<string, string | undefined>;
    const id = file.replace(/\.wav$/, "");
    const expires = Number(query.Expires);
    if (!Number.isInteger(expires) || query.Signature !== signature(id, expires)) {
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
    const stored = this.#files.get(id);
    if (!stored) return ossError(reply, 404, "NoSuchKey", "The specified key does not exist.");
    return reply
      .code(200)
      .type("audio/wav")
      .header("content-length", stored.bytes.length)
      .send(stored.bytes);
  }
}

export function registerResultHost(app: FastifyInstance, store: SpeechResultStore): void {
  app.get(`${RESULT_PREFIX}:file`, (request, reply) => store.serve(request, reply));
}

/** `http://host:port` of the request, as the client addressed the sandbox. */
export function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? "127.0.0.1"}`;
}

const stores = new WeakMap<object, SpeechResultStore>();

/** The result store of one sandbox server (keyed by its state). */
export function resultStoreFor(owner: object): SpeechResultStore {
  let store = stores.get(owner);
  if (!store) {
    store = new SpeechResultStore();
    stores.set(owner, store);
  }
  return store;
}
