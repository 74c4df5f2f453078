/**
 * @module providers/kit/image-magic
 * Whether bytes a vendor calls an image are a whole one (PNG, JPEG, WebP or GIF): they start
 * with the format's signature and end where the format says a file ends. An answer that carries
 * something else (an HTML error page in `b64_json`, say) or a picture cut short is refused as
 * the vendor's failure instead of being delivered and billed as an image.
 */

const PNG_END = [0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82];
/** Bytes a JPEG or GIF may carry after its end marker (padding some encoders add). */
const TRAILING_SLACK = 256;

function startsWith(bytes: Uint8Array, offset: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** The format whose signature the bytes start with, if any. */
function formatOf(bytes: Uint8Array): "png" | "jpeg" | "webp" | "gif" | undefined {
  if (bytes[0] === 0x89 && startsWith(bytes, 1, "PNG")) return "png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (startsWith(bytes, 0, "RIFF") && startsWith(bytes, 8, "WEBP")) return "webp";
  if (startsWith(bytes, 0, "GIF8")) return "gif";
  return undefined;
}

/** Whether the last `slack` bytes hold `marker`. */
function endsNear(bytes: Uint8Array, marker: number[], slack: number): boolean {
  const from = Math.max(0, bytes.length - slack - marker.length);
  for (let at = bytes.length - marker.length; at >= from; at--) {
    let found = true;
    for (let i = 0; i < marker.length && found; i++) found = bytes[at + i] === marker[i];
    if (found) return true;
  }
  return false;
}

/** Whether `bytes` are a whole picture: its format's signature at the start and end at the end. */
export function isCompleteImage(bytes: Uint8Array): boolean {
  if (bytes.length < 12) return false;
  switch (formatOf(bytes)) {
    case "png":
      return endsNear(bytes, PNG_END, 0);
    case "jpeg":
      return endsNear(bytes, [0xff, 0xd9], TRAILING_SLACK);
    case "webp": {
      const riffSize = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(
        4,
        true,
      );
      return bytes.length >= riffSize + 8;
    }
    case "gif":
      return endsNear(bytes, [0x3b], TRAILING_SLACK);
    default:
      return false;
  }
}

/** Whether base64 text decodes to a whole picture (see {@link isCompleteImage}). */
export function isBase64Image(base64: string): boolean {
  return isCompleteImage(Buffer.from(base64, "base64"));
}
