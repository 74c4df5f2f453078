/**
 * @module sandbox/image-results
 * The sandbox's stand-in for the vendors' result hosts (DashScope's OSS bucket, OpenAI's blob
 * store): `GET /__results/<id>.<ext>?Expires=<unix>&Signature=<hmac>`. Nothing is stored: the
 * id names the picture (size, seed, format, background), which is drawn again on each download.
 * Links are signed and checked by `signed-links.ts`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  canSynthesize,
  MEDIA_TYPES,
  type SynthFormat,
  type SynthSpec,
  synthesize,
} from "./image-synth.ts";
import { type LinkSigner, ossError, refuseDownload } from "./signed-links.ts";

export const RESULTS_PREFIX = "/__results/";
/** DashScope's result links live 24 h. */
export const DASHSCOPE_RESULT_TTL_SECONDS = 24 * 60 * 60;
/** DALL·E 2 links live 60 minutes. */
export const OPENAI_RESULT_TTL_SECONDS = 60 * 60;

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

/** A link on `origin` (e.g. `http://127.0.0.1:8090`) to the picture, signed by `links`. */
export function signResultUrl(
  origin: string,
  picture: ResultPicture,
  ttlSeconds: number,
  links: LinkSigner,
): string {
  const file = resultFileName(picture);
  return `${origin}${RESULTS_PREFIX}${file}?${links.signedQuery(file, ttlSeconds).query}`;
}

async function serveResult(request: FastifyRequest, reply: FastifyReply, links: LinkSigner) {
  const { file } = request.params as { file: string };
  const refused = refuseDownload(request, reply, links, file);
  if (refused) return refused;
  const picture = parseResultFileName(file);
  if (!picture || !canSynthesize(picture)) {
    return ossError(reply, 404, "NoSuchKey", "The specified key does not exist.");
  }
  const bytes = await synthesize(picture);
  return reply
    .code(200)
    .headers({ "content-type": MEDIA_TYPES[picture.format], "cache-control": "private" })
    .send(bytes);
}

export function registerImageResultRoutes(app: FastifyInstance, links: LinkSigner): void {
  app.get(`${RESULTS_PREFIX}:file`, (request, reply) => serveResult(request, reply, links));
}
