/**
 * `writeSse` on a real HTTP server: the frames of one turn go out in one system call, and the
 * last frames of a stream that ran to its end go out together with the end of the answer.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { SseFrame } from "./sse.ts";
import { formatSseFrame, writeSse } from "./sse.ts";

/** Counts the socket writes (`_write` and `_writev`) a response makes from now on. */
function countWrites(response: ServerResponse): { count: number } {
  const counter = { count: 0 };
  const socket = response.socket as Socket & {
    _write: (...args: unknown[]) => void;
    _writev?: (...args: unknown[]) => void;
  };
  const write = socket._write.bind(socket);
  socket._write = (...args) => {
    counter.count++;
    write(...args);
  };
  const writev = socket._writev?.bind(socket);
  if (writev)
    socket._writev = (...args) => {
      counter.count++;
      writev(...args);
    };
  return counter;
}

async function* burst(count: number): AsyncGenerator<SseFrame> {
  for (let index = 0; index < count; index++) yield { data: { index } };
  yield { data: "[DONE]" };
}

describe("formatSseFrame", () => {
  it("writes a batch of frames as one event each, in order", () => {
    const batch = [
      { data: undefined, json: '{"a":1}' },
      { event: "ping", data: { type: "ping" } },
    ];
    expect(formatSseFrame({ data: undefined, batch })).toBe(
      'data: {"a":1}\n\nevent: ping\ndata: {"type":"ping"}\n\n',
    );
    expect(formatSseFrame({ event: "ping", data: { type: "ping" } })).toBe(
      'event: ping\ndata: {"type":"ping"}\n\n',
    );
    expect(formatSseFrame({ data: "[DONE]" })).toBe("data: [DONE]\n\n");
  });
});

describe("writeSse", () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  async function serve(
    frames: () => AsyncIterable<SseFrame>,
  ): Promise<{ body: string; writes: number }> {
    let writes = 0;
    const server = createServer((_request, response) => {
      const counter = countWrites(response);
      response.writeHead(200, { "content-type": "text/event-stream" });
      const signal = new AbortController().signal;
      void writeSse(response, frames(), { signal }).then(() => {
        response.end();
        // Counted once the end went out (`finish`: everything handed to the socket).
        response.once("finish", () => {
          writes = counter.count;
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () => server.close();
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`);
    const body = await response.text();
    return { body, writes };
  }

  it("sends a stream's last frames and the end of the answer in one write", async () => {
    const { body, writes } = await serve(() => burst(3));
    expect(body).toBe(
      'data: {"index":0}\n\ndata: {"index":1}\n\ndata: {"index":2}\n\ndata: [DONE]\n\n',
    );
    // Head, frames and the chunked terminator: one system call.
    expect(writes).toBe(1);
  });

  it("sends frames that arrive in separate turns as they come", async () => {
    async function* slow(): AsyncGenerator<SseFrame> {
      yield { data: { index: 0 } };
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield { data: { index: 1 } };
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield { data: "[DONE]" };
    }
    const { body, writes } = await serve(slow);
    expect(body).toBe('data: {"index":0}\n\ndata: {"index":1}\n\ndata: [DONE]\n\n');
    // The first two frames each went out in their own turn; the last with the end.
    expect(writes).toBe(3);
  });
});
