/**
 * @module providers/kit/image-magic
 * Whether bytes a vendor calls an image start like one (PNG, JPEG, WebP or GIF signatures), so
 * an answer that carries something else (an HTML error page in `b64_json`, say) is refused as
 * the vendor's failure instead of being delivered and billed as an image.
 */

/** The first bytes of each image format the image APIs answer. */
function startsLikeImage(bytes: Uint8Array): boolean {
  const at = (offset: number, text: string) =>
    [...text].every((char, i) => bytes[offset + i] === char.charCodeAt(0));
  if (bytes[0] === 0x89 && at(1, "PNG")) return true;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return true;
  if (at(0, "RIFF") && at(8, "WEBP")) return true;
  return at(0, "GIF8");
}

/** Whether base64 text decodes to the start of an image (only its first bytes are decoded). */
export function isBase64Image(base64: string): boolean {
  const head = Buffer.from(base64.slice(0, 24), "base64");
  return head.length >= 12 && startsLikeImage(head);
}
