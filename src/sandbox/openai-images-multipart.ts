/**
 * @module sandbox/openai-images-multipart
 * The sandbox's `multipart/form-data` reader (busboy) for `POST …/images/edits`: text fields by
 * name and files in order, read into memory (the sandbox accepts up to 64 MiB per request).
 * Repeated `image[]` parts and a single `image` part both land in `files`.
 */

import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { Busboy } from "@fastify/busboy";

export const SANDBOX_FORM_LIMIT = 64 * 1024 * 1024;

export interface FormFile {
  field: string;
  filename: string;
  mimeType: string;
  bytes: Uint8Array;
}

export interface ParsedForm {
  fields: Record<string, string>;
  files: FormFile[];
}

export class FormTooLarge extends Error {}

export function readForm(headers: IncomingHttpHeaders, payload: Readable): Promise<ParsedForm> {
  return new Promise((resolve, reject) => {
    const contentType = headers["content-type"] ?? "";
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: { ...headers, "content-type": contentType },
        limits: { fileSize: SANDBOX_FORM_LIMIT, fieldSize: 1024 * 1024 },
      });
    } catch (error) {
      reject(error);
      return;
    }
    const form: ParsedForm = { fields: {}, files: [] };
    const pending: Promise<void>[] = [];
    let total = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      payload.unpipe(parser);
      payload.resume();
      reject(error);
    };
    parser.on("field", (name, value) => {
      form.fields[name] = value;
    });
    parser.on("file", (field, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      pending.push(
        new Promise<void>((done) => {
          stream.on("data", (chunk: Buffer) => {
            total += chunk.length;
            if (total > SANDBOX_FORM_LIMIT) fail(new FormTooLarge("Request too large."));
            else chunks.push(chunk);
          });
          stream.on("limit", () => fail(new FormTooLarge("Request too large.")));
          stream.on("error", (error: Error) => {
            fail(error);
            done();
          });
          stream.on("end", () => {
            form.files.push({
              field,
              filename,
              mimeType,
              bytes: new Uint8Array(Buffer.concat(chunks)),
            });
            done();
          });
        }),
      );
    });
    parser.on("error", (error: unknown) =>
      fail(error instanceof Error ? error : new Error(String(error))),
    );
    parser.on("finish", () => {
      void Promise.all(pending).then(() => {
        if (!failed) resolve(form);
      });
    });
    payload.pipe(parser);
  });
}
