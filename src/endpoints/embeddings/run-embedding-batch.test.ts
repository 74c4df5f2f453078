import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { defaultBackoffMs, runEmbeddingBatch } from "./run-embedding-batch.ts";
import { splitEmbeddingBatch } from "./split-embedding-batch.ts";

const parts = (count: number) =>
  splitEmbeddingBatch(new Array(count * 2).fill(1), { maxInputs: 2 });
const options = { concurrency: 3, maxAttempts: 3, backoffMs: () => 1 };
const overloaded = () => new UpstreamError({ kind: "http", status: 503, message: "overloaded" });
const rejected = () => new UpstreamError({ kind: "http", status: 400, message: "bad input" });
const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("runEmbeddingBatch", () => {
  it("returns results in part order with bounded concurrency", async () => {
    let running = 0;
    let peak = 0;
    const results = await runEmbeddingBatch(
      parts(10),
      async (part) => {
        running++;
        peak = Math.max(peak, running);
        await later(10 - part.index); // later parts finish first
        running--;
        return part.start;
      },
      options,
    );
    expect(results).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(peak).toBe(3);
  });

  it("retries a retryable failure, then succeeds", async () => {
    const calls = new Map<number, number>();
    const results = await runEmbeddingBatch(
      parts(3),
      async (part) => {
        const count = (calls.get(part.index) ?? 0) + 1;
        calls.set(part.index, count);
        if (part.index === 1 && count < 3) throw overloaded();
        return part.index;
      },
      options,
    );
    expect(results).toEqual([0, 1, 2]);
    expect(calls.get(1)).toBe(3);
  });

  it("fails the whole batch after the retries, naming the part, and cancels the others", async () => {
    const cancelled: number[] = [];
    const error = await runEmbeddingBatch(
      parts(6),
      async (part, signal) => {
        if (part.index === 1) throw overloaded();
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, 1_000);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            cancelled.push(part.index);
            reject(new UpstreamError({ kind: "aborted", message: "aborted" }));
          });
        });
        return part.index;
      },
      options,
    ).catch((caught: unknown) => caught);
    expect(UpstreamError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 503, retryable: true });
    expect((error as Error).message).toBe(
      "Batch part 2 of 6 (inputs 2-3) failed after 3 attempts: overloaded",
    );
    expect(cancelled.sort()).toEqual([0, 2]);
  });

  it("does not retry a final failure, and keeps a lone part's error as it is", async () => {
    let calls = 0;
    const error = await runEmbeddingBatch(
      parts(1),
      async () => {
        calls++;
        throw rejected();
      },
      options,
    ).catch((caught: unknown) => caught);
    expect(calls).toBe(1);
    expect((error as Error).message).toBe("bad input");
  });

  it("rethrows errors that are not upstream failures", async () => {
    await expect(
      runEmbeddingBatch(
        parts(2),
        async () => {
          throw new TypeError("bug");
        },
        options,
      ),
    ).rejects.toThrow(TypeError);
  });

  it("stops when the client goes away", async () => {
    const client = new AbortController();
    const run = runEmbeddingBatch(
      parts(4),
      async (_part, signal) => {
        client.abort();
        if (signal.aborted) throw new UpstreamError({ kind: "aborted", message: "aborted" });
        return 1;
      },
      { ...options, signal: client.signal },
    );
    await expect(run).rejects.toMatchObject({ kind: "aborted" });
  });
});

describe("defaultBackoffMs", () => {
  it("doubles from 100 ms, or follows retry-after, capped at 2 s", () => {
    expect([1, 2, 3, 10].map((retry) => defaultBackoffMs(retry, overloaded()))).toEqual([
      100, 200, 400, 2000,
    ]);
    const limited = new UpstreamError({
      kind: "http",
      status: 429,
      message: "slow down",
      retryAfterSeconds: 1,
    });
    expect(defaultBackoffMs(1, limited)).toBe(1000);
    expect(defaultBackoffMs(1, new UpstreamError({ ...limited, retryAfterSeconds: 30 }))).toBe(
      2000,
    );
  });
});
