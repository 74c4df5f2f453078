/**
 * @module providers/kit/upstream-call
 * The one upstream request helper every adapter uses: post (or get), status check with the
 * vendor's error envelope read by the adapter's reader, and the success body read within the
 * client's size limit and parsed. Whatever goes wrong after the status line — a body cut short,
 * one larger than the limit, text that is not JSON, JSON of an unexpected shape — ends as an
 * `UpstreamError` (a 502 for the client), never as an unexpected exception (a 500).
 */

import { type CallSignal, UpstreamError } from "../../spec/index.ts";
import {
  type HttpClient,
  type RequestInit,
  toUpstreamError,
  type UpstreamResponse,
} from "./http-client.ts";

/** Reads a non-2xx answer into the vendor's error (see `read-error.ts`). */
export type ErrorReader = (response: UpstreamResponse) => Promise<UpstreamError>;

export interface UpstreamRequest extends RequestInit {
  /** JSON text, or raw bytes (a multipart form). */
  body: string | Uint8Array;
  /** How this vendor's error answers are read. */
  readError: ErrorReader;
}

/** Sends the request; answers the response when its status is 2xx, else throws the vendor's error. */
export async function postUpstream(
  http: HttpClient,
  url: string,
  request: UpstreamRequest,
): Promise<UpstreamResponse> {
  const { readError, ...init } = request;
  return checked(await http.post(url, init), readError);
}

/** A `GET` (a task poll): the response when its status is 2xx, else the vendor's error. */
export async function getUpstream(
  http: HttpClient,
  url: string,
  request: Omit<UpstreamRequest, "body">,
): Promise<UpstreamResponse> {
  const { readError, ...init } = request;
  return checked(await http.get(url, init), readError);
}

async function checked(
  response: UpstreamResponse,
  readError: ErrorReader,
): Promise<UpstreamResponse> {
  if (response.status >= 300) throw await readError(response);
  return response;
}

/** The error for a body that was read but cannot be understood. */
export function badResponse(detail: string, cause?: unknown, body?: unknown): UpstreamError {
  return new UpstreamError({
    kind: "protocol",
    message: `Upstream answered with ${detail}.`,
    ...(cause === undefined ? {} : { cause }),
    ...(body === undefined ? {} : { body }),
  });
}

/**
 * Reads the whole body as text within the client's limit. A failed read (connection cut,
 * idle timeout, too large, client gone) is the matching `UpstreamError`.
 */
export function readBodyText(
  response: UpstreamResponse,
  signal: CallSignal | undefined,
): Promise<string> {
  return response.body.text().catch((error: unknown) => {
    throw toUpstreamError(error, signal);
  });
}

/** Parses a JSON text; text that is not JSON is a protocol error. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw badResponse("invalid JSON", error);
  }
}

/** Reads and parses a JSON body; text that is not JSON is a protocol error. */
export async function readJsonBody(
  response: UpstreamResponse,
  signal: CallSignal | undefined,
): Promise<unknown> {
  return parseJson(await readBodyText(response, signal));
}

/**
 * Reads a JSON object (not an array, string or `null`) and maps it with `read`. Anything `read`
 * throws that is not already an `UpstreamError` (a field of the wrong type) is a protocol error.
 * (One async step on the hot path: the body's text, then synchronous work.)
 */
export async function readJsonObject<T>(
  response: UpstreamResponse,
  signal: CallSignal | undefined,
  read: (body: Record<string, unknown>) => T,
): Promise<T> {
  const body = parseJson(await readBodyText(response, signal));
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw badResponse("JSON that is not an object", undefined, body);
  try {
    return read(body as Record<string, unknown>);
  } catch (error) {
    if (UpstreamError.isInstance(error)) throw error;
    throw badResponse(
      `a body of an unexpected shape (${error instanceof Error ? error.message : String(error)})`,
      error,
      body,
    );
  }
}

/**
 * `parts` (what an adapter reads from a streamed body) with read failures turned into
 * `UpstreamError`s. A generator function made once: one made per call would be kept by V8, with
 * all it closes over, until its next full collection (docs/performance.md).
 */
export async function* withUpstreamErrors<T>(
  parts: AsyncIterable<T>,
  signal: CallSignal | undefined,
): AsyncGenerator<T> {
  try {
    yield* parts;
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
}

/** The chunks of a streamed body, with read failures turned into `UpstreamError`s. */
export function readChunks(
  response: UpstreamResponse,
  signal: CallSignal | undefined,
): AsyncGenerator<Buffer> {
  return withUpstreamErrors(response.body, signal);
}
