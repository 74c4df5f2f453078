import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/index.ts";
import { type FormLimits, readImageForm } from "./multipart-form.ts";
import { UploadedFile } from "./schema.ts";

const BOUNDARY = "xyzBOUNDARY";
const HEADERS = { "content-type": `multipart/form-data; boundary=${BOUNDARY}` };
const KiB = 1024;
const LIMITS: FormLimits = {
  fileBytes: 256 * KiB,
  totalBytes: 512 * KiB,
  files: 4,
  fields: 8,
  fieldBytes: 1024,
};

function text(name: string, value: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}

function fileHead(name: string, filename: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`;
}

function body(parts: (string | Buffer)[]): Readable {
  return Readable.from([...parts, `--${BOUNDARY}--\r\n`].map((part) => Buffer.from(part)));
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!GatewayError.isInstance(error)) throw new Error(`expected a GatewayError, got ${error}`);
  return error;
}

describe("readImageForm", () => {
  it("reads fields and files, gathers image[] parts in order and coerces n", async () => {
    const form = await readImageForm(
      HEADERS,
      body([
        text("model", "imgmodel-2"),
        text("n", "3"),
        text("size", "1024x1024"),
        fileHead("image[]", "a.png"),
        "AAA\r\n",
        fileHead("image[]", "b.png"),
        "BB\r\n",
        fileHead("mask", "m.png"),
        "M\r\n",
      ]),
      LIMITS,
    );
    expect(form.model).toBe("imgmodel-2");
    expect(form.n).toBe(3);
    expect(form.size).toBe("1024x1024");
    const images = form.image as UploadedFile[];
    expect(images.map((file) => [file.filename, Buffer.from(file.bytes).toString()])).toEqual([
      ["a.png", "AAA"],
      ["b.png", "BB"],
    ]);
    expect(form.mask).toBeInstanceOf(UploadedFile);
  });

  it("keeps a non-numeric n as text for the schema to refuse", async () => {
    const form = await readImageForm(HEADERS, body([text("n", "two")]), LIMITS);
    expect(form.n).toBe("two");
  });

  it("stops at the total limit without reading (or keeping) the whole upload", async () => {
    let produced = 0;
    let producedAtRejection = 0;
    const chunk = Buffer.alloc(16 * KiB, 7);
    const upload = Readable.from(
      (async function* () {
        const head = Buffer.from(fileHead("image", "big.png"));
        produced += head.length;
        yield head;
        // 10 MiB of file data in 16 KiB chunks (each file part stays under its own limit).
        for (let i = 0; i < 640; i++) {
          if (i % 8 === 0 && i > 0) {
            const next = Buffer.from(`\r\n${fileHead("image[]", `part${i}.png`)}`);
            produced += next.length;
            yield next;
          }
          // A sender on a network: one chunk per turn of the event loop.
          await new Promise((resolve) => setImmediate(resolve));
          produced += chunk.length;
          yield chunk;
        }
      })(),
    );
    const error = await rejection(
      readImageForm(HEADERS, upload, { ...LIMITS, files: 1000 }).catch((caught: unknown) => {
        producedAtRejection = produced;
        throw caught;
      }),
    );
    expect(error.code).toBe("request_too_large");
    expect(error.status).toBe(413);
    expect(producedAtRejection).toBeLessThan(LIMITS.totalBytes + 512 * KiB);
    // The rest is read and dropped, and a sender that goes on far past the limit is cut off.
    await new Promise((resolve) => upload.once("close", resolve));
    expect(produced).toBeLessThan(3 * LIMITS.totalBytes);
  });

  it("refuses one file over the per-file limit, naming it", async () => {
    const error = await rejection(
      readImageForm(
        HEADERS,
        body([fileHead("image", "huge.png"), Buffer.alloc(300 * KiB), "\r\n"]),
        LIMITS,
      ),
    );
    expect(error.status).toBe(413);
    expect(error.message).toMatch(/'huge.png' exceeds the limit of 262144 bytes per file/);
    expect(error.param).toBe("image");
  });

  it("refuses image or mask sent as text, too many files, long fields and broken bodies", async () => {
    expect((await rejection(readImageForm(HEADERS, body([text("mask", "x")]), LIMITS))).param).toBe(
      "mask",
    );
    const files = Array.from({ length: 5 }, (_, i) => [fileHead("image[]", `${i}.png`), "x\r\n"]);
    expect((await rejection(readImageForm(HEADERS, body(files.flat()), LIMITS))).message).toMatch(
      /more than 4 files/,
    );
    const long = await rejection(
      readImageForm(HEADERS, body([text("prompt", "p".repeat(2000))]), LIMITS),
    );
    expect(long.param).toBe("prompt");
    const noBoundary = readImageForm({ "content-type": "multipart/form-data" }, body([]), LIMITS);
    expect((await rejection(noBoundary)).code).toBe("invalid_request");
    const cut = Readable.from([Buffer.from(`${fileHead("image", "a.png")}abc`)]);
    expect((await rejection(readImageForm(HEADERS, cut, LIMITS))).code).toBe("invalid_request");
  });
});
