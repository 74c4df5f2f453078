/**
 * @module mcp/fetch-image
 * Reads an image an agent names by URL or gives as base64 into bytes for an edit. URLs are held
 * to the same address policy as webhooks (public addresses only unless the operator allows
 * loopback or private networks), the connection is pinned to the addresses just checked, and the
 * read is bounded in time and size. The gateway never fetches what a client could not.
 */
import { Agent, request } from "undici";
import { GatewayError } from "../errors/index.ts";
import {
  checkWebhookUrl,
  pinnedLookup,
  type WebhookAddressPolicy,
  WebhookUrlError,
} from "../tasks/webhooks/index.ts";

/** The largest image read for an edit (the multipart upload limit of `/v1/images/edits`). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 15_000;

export interface ImageSource {
  url?: string;
  base64?: string;
}

/**
 * The bytes the images of one call may still take together (the edit endpoint's limit on a whole
 * upload, so MCP cannot send more than HTTP may); each fetch takes its share.
 */
export interface ImageBudget {
  leftBytes: number;
  readonly totalBytes: number;
}

/** An image too large alone (400), or one that leaves the call over its budget (413). */
function tooLarge(param: string, size: number, budget: ImageBudget): GatewayError {
  if (size > MAX_IMAGE_BYTES) return invalid(param, "larger than 20 MiB.");
  return new GatewayError("request_too_large", { limit: budget.totalBytes }, { param });
}

export interface FetchedImage {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
}

const CONTENT_TYPES: Record<string, string> = {
  "89504e47": "image/png",
  ffd8ff: "image/jpeg",
  "52494646": "image/webp",
};

/** The media type the bytes' signature shows (the edit endpoint checks the format again). */
function sniff(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.subarray(0, 4)).toString("hex");
  for (const [prefix, type] of Object.entries(CONTENT_TYPES)) {
    if (hex.startsWith(prefix)) return type;
  }
  return "application/octet-stream";
}

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError(
    "invalid_parameter",
    { detail: `Invalid '${param}': ${detail}` },
    { param },
  );
}

function decodeBase64(value: string, param: string, budget: ImageBudget): Uint8Array {
  const data = value.startsWith("data:") ? value.slice(value.indexOf(",") + 1) : value;
  if (!/^[A-Za-z0-9+/=\s]+$/.test(data)) throw invalid(param, "not base64.");
  const bytes = Buffer.from(data, "base64");
  if (bytes.length === 0) throw invalid(param, "empty image.");
  if (bytes.length > Math.min(MAX_IMAGE_BYTES, budget.leftBytes))
    throw tooLarge(param, bytes.length, budget);
  return bytes;
}

async function download(
  raw: string,
  param: string,
  policy: WebhookAddressPolicy,
  budget: ImageBudget,
) {
  let checked: Awaited<ReturnType<typeof checkWebhookUrl>>;
  try {
    checked = await checkWebhookUrl(raw, policy);
  } catch (error) {
    if (error instanceof WebhookUrlError) {
      throw invalid(param, "the URL must be http(s) on a public address the gateway may reach.");
    }
    throw error;
  }
  const agent = new Agent({
    connect: { lookup: pinnedLookup(checked.addresses), timeout: FETCH_TIMEOUT_MS },
    connections: 1,
  });
  try {
    const response = await request(checked.url, {
      dispatcher: agent,
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw invalid(param, `the URL answered ${response.statusCode}.`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const limit = Math.min(MAX_IMAGE_BYTES, budget.leftBytes);
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        response.body.destroy();
        throw tooLarge(param, size, budget);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } catch (error) {
    if (GatewayError.isInstance(error)) throw error;
    throw invalid(param, `the URL could not be read (${(error as Error).message}).`);
  } finally {
    await agent.close();
  }
}

/** Reads one image; its bytes are taken from `budget`. */
export async function fetchImage(
  source: ImageSource,
  param: string,
  policy: WebhookAddressPolicy,
  budget: ImageBudget,
): Promise<FetchedImage> {
  if ((source.url === undefined) === (source.base64 === undefined)) {
    throw invalid(param, "give exactly one of 'url' and 'base64'.");
  }
  const bytes =
    source.base64 !== undefined
      ? decodeBase64(source.base64, param, budget)
      : await download(source.url!, param, policy, budget);
  budget.leftBytes -= bytes.length;
  const contentType = sniff(bytes);
  const extension = contentType.split("/")[1] ?? "bin";
  return { bytes, contentType, filename: `${param.replace(/\W/g, "_")}.${extension}` };
}
