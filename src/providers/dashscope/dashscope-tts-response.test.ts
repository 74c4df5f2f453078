import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../spec/index.ts";
import { dashScopeStatusFor } from "./dashscope-error.ts";
import {
  inlineAudio,
  parseTtsBody,
  readTtsStream,
  type TtsStreamReport,
} from "./dashscope-tts-response.ts";

async function* stream(text: string): AsyncGenerator<Buffer> {
  // Split mid-line to exercise the decoder's buffering.
  for (let i = 0; i < text.length; i += 17) yield Buffer.from(text.slice(i, i + 17));
}

function event(id: number, data: unknown, name = "result", status = 200): string {
  return `id:${id}\nevent:${name}\n:HTTP_STATUS/${status}\ndata:${JSON.stringify(data)}\n\n`;
}

const pcm = (bytes: number[]) => Buffer.from(bytes).toString("base64");
const chunk = (data: string) => ({
  output: { finish_reason: "null", audio: { data } },
  request_id: "r-1",
});
const last = {
  output: { finish_reason: "stop", audio: { url: "http://x/a.wav", data: "" } },
  usage: { characters: 12 },
  request_id: "r-1",
};

async function read(text: string, report: TtsStreamReport = {}): Promise<number[]> {
  const bytes: number[] = [];
  for await (const part of readTtsStream(stream(text), report)) bytes.push(...part);
  return bytes;
}

async function failure(text: string): Promise<UpstreamError> {
  try {
    await read(text);
  } catch (error) {
    if (UpstreamError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a failure");
}

describe("readTtsStream", () => {
  it("decodes the base64 PCM of each event and reads usage from the last", async () => {
    const report: TtsStreamReport = {};
    const bytes = await read(
      event(1, chunk(pcm([1, 2, 3, 4]))) + event(2, chunk(pcm([5, 6]))) + event(3, last),
      report,
    );
    expect(bytes).toEqual([1, 2, 3, 4, 5, 6]);
    expect(report).toEqual({ characters: 12, requestId: "r-1" });
  });

  it("turns an error event into the vendor's error", async () => {
    const error = await failure(
      event(1, chunk(pcm([1, 2]))) +
        event(
          2,
          {
            code: "Throttling.RateQuota",
            message: "Requests rate limit exceeded.",
            request_id: "r-2",
          },
          "error",
          429,
        ),
    );
    expect(error).toMatchObject({
      kind: "http",
      status: 429,
      vendorCode: "Throttling.RateQuota",
      upstreamRequestId: "r-2",
    });
    expect(error.message).toBe("Requests rate limit exceeded.");
  });

  it("turns a result event that carries only an error code into that error", async () => {
    const error = await failure(
      event(1, { code: "InvalidParameter", message: "bad voice", request_id: "r" }),
    );
    expect(error).toMatchObject({
      status: 400,
      vendorCode: "InvalidParameter",
      message: "bad voice",
    });
  });

  it("fails on data that is not JSON", async () => {
    expect(await failure('id:1\nevent:result\ndata:{"output":\n\n')).toMatchObject({
      kind: "protocol",
    });
  });

  it("fails a stream that ends before finish_reason stop", async () => {
    const error = await failure(event(1, chunk(pcm([1, 2]))));
    expect(error.kind).toBe("protocol");
    expect(error.message).toMatch(/before the audio was complete/);
  });
});

describe("parseTtsBody", () => {
  it("reads a JSON answer and its inline audio", () => {
    const body = parseTtsBody(JSON.stringify({ output: { audio: { data: pcm([9, 8]) } } }));
    expect([...(inlineAudio(body) ?? [])]).toEqual([9, 8]);
    expect(inlineAudio(parseTtsBody(JSON.stringify(last)))).toBeUndefined();
  });

  it("refuses what is not a JSON object", () => {
    expect(() => parseTtsBody("<html>")).toThrow(/invalid JSON/);
    expect(() => parseTtsBody("42")).toThrow(/unexpected body/);
  });
});

describe("dashScopeStatusFor", () => {
  it("maps DashScope codes to their statuses", () => {
    expect(
      [
        "InvalidParameter",
        "InvalidApiKey",
        "AccessDenied.Unpurchased",
        "Throttling.AllocationQuota",
        "InternalError.Algo",
        "RequestTimeOut",
        undefined,
      ].map(dashScopeStatusFor),
    ).toEqual([400, 401, 403, 429, 500, 408, 500]);
  });
});
