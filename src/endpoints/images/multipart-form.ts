/**
 * @module endpoints/images/multipart-form
 * Streaming `multipart/form-data` reader (busboy) for image edits, with limits enforced while
 * the bytes arrive: per file, per request (all bytes of the body), number of files and fields,
 * and field length. Beyond a size limit it stops parsing at once and answers 413; the rest of
 * the upload is read and thrown away (never kept), and a client that keeps sending past twice
 * the limit has its connection cut. Files become `UploadedFile`s; `image` and `image[]` parts
 * are gathered into `image` (in order); integer fields (`n`, `output_compression`) are coerced.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { Busboy } from "@fastify/busboy";
import { GatewayError } from "../../errors/index.ts";
import { UploadedFile } from "./schema.ts";

export interface FormLimits {
  /** Bytes of one file. */
  fileBytes: number;
  /** Bytes of the whole body. */
  totalBytes: number;
  files: number;
  fields: number;
  /** Bytes of one text field. */
  fieldBytes: number;
}

const MiB = 1024 * 1024;

/** The gateway's limits for `/v1/images/edits` (OpenAI's own are 50 MB per GPT-image file). */
export const EDIT_FORM_LIMITS: FormLimits = {
  fileBytes: 20 * MiB,
  totalBytes: 25 * MiB,
  files: 17,
  fields: 32,
  fieldBytes: 256 * 1024,
};

const FILE_FIELDS = new Set(["image", "image[]", "mask"]);
const INTEGER_FIELDS = new Set(["n", "output_compression"]);

function coerce(name: string, value: string): string | number {
  return INTEGER_FIELDS.has(name) && /^-?\d{1,9}$/.test(value.trim()) ? Number(value) : value;
}

/** Reads the form into `{field: value}`; rejects with a `GatewayError` (400 or 413). */
export function readImageForm(
  headers: IncomingHttpHeaders,
  payload: Readable,
  limits: FormLimits = EDIT_FORM_LIMITS,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: { ...headers, "content-type": headers["content-type"] ?? "" },
        limits: {
          fileSize: limits.fileBytes,
          files: limits.files,
          fields: limits.fields,
          fieldSize: limits.fieldBytes,
        },
      });
    } catch (error) {
      reject(
        new GatewayError("invalid_request", {
          detail: `The multipart body cannot be read: ${(error as Error).message}.`,
        }),
      );
      return;
    }
    const form: Record<string, unknown> = {};
    const images: UploadedFile[] = [];
    const pending: Promise<void>[] = [];
    let received = 0;
    let failed = false;

    const fail = (error: GatewayError) => {
      if (failed) return;
      failed = true;
      payload.unpipe(parser);
      // Throw the rest away as it comes; cut a client that keeps sending far past the limit.
      let discarded = 0;
      payload.removeListener("data", count);
      payload.on("data", (chunk: Buffer) => {
        discarded += chunk.length;
        if (discarded > limits.totalBytes) payload.destroy();
      });
      payload.resume();
      reject(error);
    };
    const tooLarge = (message: string, param?: string) =>
      fail(
        new GatewayError(
          "request_too_large",
          { limit: limits.totalBytes },
          { message, ...(param ? { param } : {}) },
        ),
      );
    function count(chunk: Buffer) {
      received += chunk.length;
      if (received > limits.totalBytes)
        tooLarge(`The request body exceeds the limit of ${limits.totalBytes} bytes.`);
    }

    parser.on("field", (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) {
        fail(
          new GatewayError(
            "invalid_parameter",
            { detail: `Invalid '${name}': longer than ${limits.fieldBytes} bytes.` },
            { param: name },
          ),
        );
      } else if (FILE_FIELDS.has(name)) {
        const param = name.replace("[]", "");
        fail(
          new GatewayError(
            "invalid_parameter",
            { detail: `Invalid '${param}': must be a file upload, not a text field.` },
            { param },
          ),
        );
      } else {
        form[name] = coerce(name, value);
      }
    });
    parser.on("file", (field, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      pending.push(
        new Promise<void>((done) => {
          stream.on("data", (chunk: Buffer) => {
            if (!failed) chunks.push(chunk);
          });
          stream.on("limit", () =>
            tooLarge(
              `The file '${filename}' exceeds the limit of ${limits.fileBytes} bytes per file.`,
              field.replace("[]", ""),
            ),
          );
          stream.on("error", () => done());
          stream.on("end", () => {
            const file = new UploadedFile(field, filename, mimeType, Buffer.concat(chunks));
            if (field === "image" || field === "image[]") images.push(file);
            else form[field] = file;
            done();
          });
        }),
      );
    });
    const tooMany = (what: string, limit: number) =>
      fail(
        new GatewayError("invalid_request", {
          detail: `The form has more than ${limit} ${what}.`,
        }),
      );
    parser.on("filesLimit", () => tooMany("files", limits.files));
    parser.on("fieldsLimit", () => tooMany("fields", limits.fields));
    parser.on("error", (error: unknown) =>
      fail(
        new GatewayError("invalid_request", {
          detail: `The multipart body is malformed: ${error instanceof Error ? error.message : String(error)}.`,
        }),
      ),
    );
    parser.on("finish", () => {
      void Promise.all(pending).then(() => {
        if (failed) return;
        if (images.length > 0) form.image = images;
        resolve(form);
      });
    });
    payload.on("data", count);
    const interrupted = () =>
      fail(new GatewayError("invalid_request", { detail: "The upload was interrupted." }));
    payload.on("error", interrupted);
    payload.once("close", () => {
      if (!payload.readableEnded) interrupted();
    });
    payload.pipe(parser);
  });
}
