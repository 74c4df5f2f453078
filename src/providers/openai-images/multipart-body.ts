/**
 * @module providers/openai-images/multipart-body
 * Builds a `multipart/form-data` body (RFC 7578) in memory: text fields and files, in order.
 * Image edits go upstream this way; the uploads are already in memory, so one buffer is fine.
 */
import { randomBytes } from "node:crypto";

export type FormPart =
  | { name: string; value: string }
  | { name: string; filename: string; contentType: string; bytes: Uint8Array };

export interface MultipartBody {
  contentType: string;
  body: Uint8Array;
}

/** Quotes a header parameter value; CR, LF and `"` are percent-encoded as browsers do. */
function quoted(value: string): string {
  return `"${value.replace(/[\r\n"]/g, (character) => encodeURIComponent(character))}"`;
}

export function buildMultipartBody(parts: readonly FormPart[], boundary?: string): MultipartBody {
  const marker = boundary ?? `----switchyard${randomBytes(12).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${marker}\r\nContent-Disposition: form-data; name=${quoted(part.name)}`;
    if ("bytes" in part) {
      head += `; filename=${quoted(part.filename)}\r\nContent-Type: ${part.contentType}\r\n\r\n`;
      chunks.push(Buffer.from(head, "utf8"), Buffer.from(part.bytes), Buffer.from("\r\n"));
    } else {
      chunks.push(Buffer.from(`${head}\r\n\r\n${part.value}\r\n`, "utf8"));
    }
  }
  chunks.push(Buffer.from(`--${marker}--\r\n`, "utf8"));
  return {
    contentType: `multipart/form-data; boundary=${marker}`,
    body: new Uint8Array(Buffer.concat(chunks)),
  };
}
