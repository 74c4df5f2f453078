/**
 * @module providers/kit/bounded-body
 * An upstream response body that is never read past a byte limit: whole answers
 * (`max_response_bytes`) and event streams (`max_stream_bytes`, over the stream's whole life)
 * alike. Past the limit the connection is closed and reading fails with an `UpstreamError` of
 * kind `too_large`, so the gateway buffers at most the limit (plus one network chunk).
 */
import { UpstreamError } from "../../spec/index.ts";

/** What the HTTP client hands adapters as a response body. */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /** The whole body parsed as JSON (a `SyntaxError` when it is not JSON). */
  json(): Promise<unknown>;
  destroy(): void;
}

/** The raw body the client wraps (undici's body: an async iterable stream of Buffers). */
export interface RawBody extends AsyncIterable<Buffer> {
  destroy(error?: Error): unknown;
  on?(event: "error", listener: (error: Error) => void): unknown;
  /** The whole body as text (undici's own reader, faster than iterating). */
  text?(): Promise<string>;
}

/** Marks a body read by its own reader: iterating it afterwards yields nothing. */
const EMPTY: AsyncIterator<Buffer> = { next: async () => ({ done: true, value: undefined }) };

/** Closes the body unread; the abort error undici then emits has nobody to reach. */
function discard(raw: RawBody): void {
  raw.on?.("error", () => {});
  raw.destroy();
}

export function tooLargeError(limit: number, what = "answer"): UpstreamError {
  return new UpstreamError({
    kind: "too_large",
    message: `The upstream ${what} exceeded the gateway's limit of ${limit} bytes.`,
  });
}

/** Told once a body has been read whole, failed, or been dropped (the raw body it wraps). */
export type BodyDone = (raw: RawBody) => void;

/** A body read at most to its limit (one object per response, methods on the prototype). */
class BoundedBody implements UpstreamBody {
  readonly #raw: RawBody;
  readonly #limit: number;
  readonly #declared: number | undefined;
  readonly #what: string;
  readonly #done: BodyDone | undefined;
  #iterator: AsyncIterator<Buffer> | undefined;

  constructor(
    raw: RawBody,
    limit: number,
    declared: number | undefined,
    what: string,
    done: BodyDone | undefined,
  ) {
    this.#raw = raw;
    this.#limit = limit;
    this.#declared = declared;
    this.#what = what;
    this.#done = done;
  }

  async *#chunks(): AsyncGenerator<Buffer> {
    try {
      yield* this.#read();
    } finally {
      this.#done?.(this.#raw);
    }
  }

  async *#read(): AsyncGenerator<Buffer> {
    const limit = this.#limit;
    if (this.#declared !== undefined && this.#declared > limit) {
      discard(this.#raw);
      throw tooLargeError(limit, this.#what);
    }
    let seen = 0;
    // Leaving the loop (by the throw, or a consumer that stops early) closes the body.
    for await (const chunk of this.#raw) {
      seen += chunk.length;
      if (seen > limit) throw tooLargeError(limit, this.#what);
      yield chunk;
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    this.#iterator ??= this.#chunks();
    return this.#iterator;
  }

  text(): Promise<string> {
    // A declared length within the limit bounds the body already (the parser frames the
    // message by it), so the raw body's own reader may take it whole.
    const raw = this.#raw;
    if (
      !this.#iterator &&
      raw.text &&
      this.#declared !== undefined &&
      this.#declared <= this.#limit
    ) {
      this.#iterator = EMPTY;
      const done = this.#done;
      if (!done) return raw.text();
      return raw.text().then(
        (text) => {
          done(raw);
          return text;
        },
        (error: unknown) => {
          done(raw);
          throw error;
        },
      );
    }
    return readChunks(this);
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  destroy(): void {
    this.#done?.(this.#raw);
    discard(this.#raw);
  }
}

/**
 * Wraps `raw` so that at most `limit` bytes are read from it. `declaredLength` (the
 * `content-length` header) fails an oversized answer before any of it is read. `done` is told
 * once the body has been read whole, failed, or been dropped.
 */
export function boundedBody(
  raw: RawBody,
  limit: number,
  declaredLength: number | undefined,
  what = "answer",
  done?: BodyDone,
): UpstreamBody {
  return new BoundedBody(raw, limit, declaredLength, what, done);
}

async function readChunks(body: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk);
  return Buffer.concat(parts).toString("utf8");
}

/** A `content-length` header as a number, when it is one. */
export function declaredLength(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Number(text);
}
