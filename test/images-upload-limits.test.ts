/**
 * Upload limits of `POST /v1/images/edits`: the multipart body is read as a stream, so an
 * upload over the limit is refused with 413 (gateway style) as soon as the limit is crossed —
 * before the client has even sent the rest — and nothing beyond the limit is kept.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDIT_FORM_LIMITS } from "../src/endpoints/images/multipart-form.ts";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { pngBytes } from "./support/image-fixtures.ts";

const MiB = 1024 * 1024;
const BOUNDARY = "----switchyard-limit-test";

function head(name: string, filename: string): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
      "Content-Type: image/png\r\n\r\n",
  );
}

function field(name: string, value: string): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
}

interface Outcome {
  status: number;
  body: string;
  /** Bytes the client had written when the response arrived. */
  sentAtResponse: number;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Streams a multipart upload of `fileBytes` bytes of "image" data. After `pauseAt` bytes the
 * client stops and waits for an answer: a server that needs the whole body never answers then.
 */
function upload(
  url: string,
  key: string,
  fileBytes: number,
  pauseAt = Number.POSITIVE_INFINITY,
): Promise<Outcome> {
  const target = new URL("/v1/images/edits", url);
  const png = pngBytes(8, 8);
  const parts = [
    field("model", "imgmodel-2"),
    field("prompt", "too big"),
    head("image", "huge.png"),
    png,
  ];
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const prefix = Buffer.concat(parts);
  const total = prefix.length + fileBytes - png.length + tail.length;
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const request = httpRequest(target, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
        "content-length": String(total),
      },
    });
    request.on("response", (response) => {
      answered = true;
      const sentAtResponse = sent;
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        request.destroy();
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          sentAtResponse,
          headers: response.headers,
        });
      });
    });
    request.on("error", (error) => {
      if (!answered) reject(error);
    });
    const filler = Buffer.alloc(MiB, 0x42);
    const write = (chunk: Buffer) =>
      new Promise<void>((done) => {
        sent += chunk.length;
        if (request.write(chunk)) done();
        else request.once("drain", () => done());
      });
    void (async () => {
      await write(prefix);
      let left = fileBytes - png.length;
      while (left > 0 && !answered && !request.destroyed) {
        if (sent >= pauseAt) {
          await new Promise((done) => setTimeout(done, 50));
          continue;
        }
        const chunk = filler.subarray(0, Math.min(filler.length, left));
        left -= chunk.length;
        await write(chunk);
      }
      if (!answered && !request.destroyed) request.end(tail);
    })();
  });
}

describe("image edit upload limits", () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await createUser(gateway)).key;
  });
  afterAll(() => gateway.close());

  it("refuses a 30 MB upload with 413 while it is still arriving", async () => {
    expect(EDIT_FORM_LIMITS.totalBytes).toBeLessThan(30 * MiB);
    // The client sends a little over the limit, then waits: the answer must come without the rest.
    const outcome = await upload(gateway.url, key, 30 * MiB, EDIT_FORM_LIMITS.totalBytes + 2 * MiB);
    expect(outcome.status).toBe(413);
    expect(outcome.sentAtResponse).toBeLessThan(30 * MiB);
    const body = JSON.parse(outcome.body) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
    expect(outcome.headers["x-request-id"]).toMatch(/^req_/);
  });

  it("refuses a 30 MB upload sent in one go with 413", async () => {
    const outcome = await upload(gateway.url, key, 30 * MiB);
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toMatchObject({ error: { code: "request_too_large" } });
  });

  it("answers the 413 to an ordinary fetch client too", async () => {
    const form = new FormData();
    form.append("model", "imgmodel-2");
    form.append("prompt", "too big");
    form.append(
      "image",
      new Blob([new Uint8Array(30 * MiB).fill(1)], { type: "image/png" }),
      "huge.png",
    );
    const response = await gateway.request("/v1/images/edits", { key, method: "POST", body: form });
    await expectGatewayError(response, {
      status: 413,
      type: "invalid_request_error",
      code: "request_too_large",
    });
  });

  it("refuses one file over the per-file limit with 413 naming the file", async () => {
    const outcome = await upload(gateway.url, key, EDIT_FORM_LIMITS.fileBytes + MiB);
    expect(outcome.status).toBe(413);
    const body = JSON.parse(outcome.body) as { error: { message: string; param?: string } };
    expect(body.error.message).toMatch(/'huge.png' exceeds the limit of \d+ bytes per file/);
    expect(body.error.param).toBe("image");
  });

  it("still answers normal edits on the same gateway afterwards", async () => {
    const form = new FormData();
    form.append("model", "imgmodel-2");
    form.append("prompt", "small");
    form.append(
      "image",
      new Blob([new Uint8Array(pngBytes(16, 16))], { type: "image/png" }),
      "small.png",
    );
    const response = await gateway.request("/v1/images/edits", { key, method: "POST", body: form });
    expect(response.status).toBe(200);
  });

  it("checks the key before reading any of the body", async () => {
    const outcome = await upload(gateway.url, "sk-nope", 30 * MiB, 2 * MiB);
    expect(outcome.status).toBe(401);
    expect(outcome.sentAtResponse).toBeLessThan(30 * MiB);
    await expectGatewayError(
      new Response(outcome.body, {
        status: outcome.status,
        headers: {
          "content-type": "application/json",
          "x-request-id": String(outcome.headers["x-request-id"]),
        },
      }),
      { status: 401, type: "invalid_request_error", code: "invalid_api_key" },
    );
  });
});
