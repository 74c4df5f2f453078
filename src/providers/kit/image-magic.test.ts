import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { isBase64Image, isCompleteImage } from "./image-magic.ts";

function png(): Uint8Array {
  const image = new PNG({ width: 4, height: 4 });
  image.data.fill(200);
  return new Uint8Array(PNG.sync.write(image));
}

describe("isCompleteImage", () => {
  it("takes a whole PNG, and refuses one cut anywhere", () => {
    const whole = png();
    expect(isCompleteImage(whole)).toBe(true);
    for (const end of [12, 33, whole.length - 12, whole.length - 1])
      expect(isCompleteImage(whole.subarray(0, end)), `cut at ${end}`).toBe(false);
  });

  it("refuses what only starts like an image", () => {
    const head = Buffer.concat([
      Buffer.from([0x89]),
      Buffer.from("PNG\r\n\u001a\n"),
      Buffer.alloc(30),
    ]);
    expect(isCompleteImage(head)).toBe(false);
    expect(isCompleteImage(Buffer.from("<html><body>error</body></html>"))).toBe(false);
  });

  it("reads a JPEG's end marker, a WebP's RIFF size and a GIF's trailer", () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...new Array(20).fill(1), 0xff, 0xd9]);
    expect(isCompleteImage(jpeg)).toBe(true);
    expect(isCompleteImage(jpeg.subarray(0, jpeg.length - 2))).toBe(false);
    const webp = Buffer.alloc(40);
    webp.write("RIFF", 0, "latin1");
    webp.writeUInt32LE(32, 4);
    webp.write("WEBP", 8, "latin1");
    expect(isCompleteImage(webp)).toBe(true);
    expect(isCompleteImage(webp.subarray(0, 30))).toBe(false);
    const gif = Buffer.concat([Buffer.from("GIF89a"), Buffer.alloc(20, 1), Buffer.from([0x3b])]);
    expect(isCompleteImage(gif)).toBe(true);
    expect(isCompleteImage(gif.subarray(0, gif.length - 1))).toBe(false);
  });

  it("decodes base64 whole", () => {
    const whole = Buffer.from(png());
    expect(isBase64Image(whole.toString("base64"))).toBe(true);
    expect(isBase64Image(whole.subarray(0, 40).toString("base64"))).toBe(false);
  });
});
