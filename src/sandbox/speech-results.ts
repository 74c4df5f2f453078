/**
 * @module sandbox/speech-results
 * The sandbox's stand-in for DashScope's result host (object storage): synthesized WAV files
 * kept in memory for a while, served under signed, expiring URLs. Like the real host it is not
 * DashScope: links are signed and checked by `signed-links.ts`.
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type LinkSigner, ossError, refuseDownload } from "./signed-links.ts";

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

/** A bounded in-memory store of WAV files (oldest dropped first). */
export class SpeechResultStore {
  #files = new Map<string, { bytes: Buffer; expires: number }>();
  #bytes = 0;

  constructor(readonly links: LinkSigner) {}

  /** Keeps the file and returns the link to it on the host the request came to. */
  put(bytes: Buffer, origin: string): StoredResult {
    const id = randomUUID().replaceAll("-", "");
    const file = `${id}.wav`;
    const { query, expires } = this.links.signedQuery(file, RESULT_TTL_SECONDS);
    this.#files.set(id, { bytes, expires });
    this.#bytes += bytes.length;
    for (const [oldest, file] of this.#files) {
      if (this.#files.size <= CAPACITY && this.#bytes <= MAX_BYTES) break;
      this.#files.delete(oldest);
      this.#bytes -= file.bytes.length;
    }
    return { id, expiresAt: expires, url: `${origin}${RESULT_PREFIX}${file}?${query}` };
  }

  serve(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const { file } = request.params as { file: string };
    const refused = refuseDownload(request, reply, this.links, file);
    if (refused) return refused;
    const id = file.replace(/\.wav$/, "");
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

const stores = new WeakMap<object, SpeechResultStore>();

/** The result store of one sandbox server (keyed by its state, whose signer it uses). */
export function resultStoreFor(owner: { links: LinkSigner }): SpeechResultStore {
  let store = stores.get(owner);
  if (!store) {
    store = new SpeechResultStore(owner.links);
    stores.set(owner, store);
  }
  return store;
}
