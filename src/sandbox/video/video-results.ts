/**
 * @module sandbox/video/video-results
 * The result host of the video emulations (DashScope's OSS bucket, xAI's `vidgen` host):
 * `GET /__results/video/vid-<w>x<h>-<seconds>s-<seed>.mp4?Expires=…&Signature=…`. Nothing is
 * stored per task: the file name says what to draw, and the few most recent files are kept
 * drawn ({@link CACHE_ENTRIES}). Links are signed and checked by `signed-links.ts`, like the
 * image and speech result links: no `Authorization` header, a good signature, not expired.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type LinkSigner, ossError, refuseDownload } from "../signed-links.ts";
import { canRender, renderVideo, type VideoSpec } from "./video-frames.ts";

export const VIDEO_RESULTS_PREFIX = "/__results/video/";
/** Drawn files kept for repeated downloads (each is at most a few hundred kilobytes). */
export const CACHE_ENTRIES = 16;

const NAME = /^vid-(\d{1,3})x(\d{1,3})-(\d{1,2})s-([0-9a-f]{8})\.mp4$/;

export function videoFileName(spec: VideoSpec): string {
  const seed = (spec.seed >>> 0).toString(16).padStart(8, "0");
  return `vid-${spec.width}x${spec.height}-${spec.seconds}s-${seed}.mp4`;
}

export function parseVideoFileName(file: string): VideoSpec | undefined {
  const match = NAME.exec(file);
  if (!match) return undefined;
  const [, width, height, seconds, seed] = match;
  return {
    width: Number(width),
    height: Number(height),
    seconds: Number(seconds),
    seed: Number.parseInt(seed ?? "0", 16),
  };
}

/** A link on `origin` to the video, signed by `links`, valid `ttlSeconds`. */
export function signVideoUrl(
  origin: string,
  spec: VideoSpec,
  ttlSeconds: number,
  links: LinkSigner,
): string {
  const file = videoFileName(spec);
  return `${origin}${VIDEO_RESULTS_PREFIX}${file}?${links.signedQuery(file, ttlSeconds).query}`;
}

/** Draws videos, keeping the last few (a small least-recently-used cache). */
class VideoCache {
  #files = new Map<string, Promise<Buffer>>();

  get(file: string, spec: VideoSpec): Promise<Buffer> {
    let bytes = this.#files.get(file);
    if (bytes) {
      this.#files.delete(file);
    } else {
      bytes = renderVideo(spec);
      bytes.catch(() => this.#files.delete(file));
    }
    this.#files.set(file, bytes);
    for (const oldest of this.#files.keys()) {
      if (this.#files.size <= CACHE_ENTRIES) break;
      this.#files.delete(oldest);
    }
    return bytes;
  }
}

async function serveVideo(
  request: FastifyRequest,
  reply: FastifyReply,
  links: LinkSigner,
  cache: VideoCache,
) {
  const { file } = request.params as { file: string };
  const refused = refuseDownload(request, reply, links, file);
  if (refused) return refused;
  const spec = parseVideoFileName(file);
  if (!spec || !canRender(spec)) {
    return ossError(reply, 404, "NoSuchKey", "The specified key does not exist.");
  }
  const bytes = await cache.get(file, spec);
  return reply
    .code(200)
    .headers({ "content-type": "video/mp4", "cache-control": "private" })
    .send(bytes);
}

export function registerVideoResultRoutes(app: FastifyInstance, links: LinkSigner): void {
  const cache = new VideoCache();
  app.get(`${VIDEO_RESULTS_PREFIX}:file`, (request, reply) =>
    serveVideo(request, reply, links, cache),
  );
}
