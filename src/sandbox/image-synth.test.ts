import jpeg from "jpeg-js";
import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { readImageFacts, sniffKind } from "./image-bytes.ts";
import { parseResultFileName, resultFileName, signResultUrl } from "./image-results.ts";
import { canSynthesize, renderPixels, synthesize } from "./image-synth.ts";
import { LinkSigner } from "./signed-links.ts";

describe("sandbox pictures", () => {
  it("draws the same pixels for the same seed, other pixels for another", () => {
    const a = renderPixels({ width: 40, height: 30, seed: 1 });
    expect(renderPixels({ width: 40, height: 30, seed: 1 })).toEqual(a);
    expect(renderPixels({ width: 40, height: 30, seed: 2 })).not.toEqual(a);
  });

  it("encodes decodable PNG (with transparency), JPEG and WebP of the exact size", async () => {
    const png = PNG.sync.read(
      await synthesize({ width: 123, height: 45, seed: 9, format: "png", transparent: true }),
    );
    expect([png.width, png.height]).toEqual([123, 45]);
    expect(png.data[3]).toBe(0);
    const jpg = jpeg.decode(await synthesize({ width: 64, height: 48, seed: 9, format: "jpeg" }));
    expect([jpg.width, jpg.height]).toEqual([64, 48]);
    const webp = await synthesize({ width: 80, height: 60, seed: 9, format: "webp" });
    expect(sniffKind(webp)).toBe("webp");
    expect(readImageFacts(webp)).toMatchObject({ kind: "webp", width: 80, height: 60 });
  });

  it("refuses sizes beyond the free-form limit and its pixel budget", async () => {
    await expect(synthesize({ width: 4000, height: 10, seed: 1, format: "png" })).rejects.toThrow(
      RangeError,
    );
    await expect(synthesize({ width: 3840, height: 3840, seed: 1, format: "png" })).rejects.toThrow(
      RangeError,
    );
    expect(canSynthesize({ width: 3840, height: 2160 })).toBe(true);
    expect(canSynthesize({ width: 3840, height: 2176 })).toBe(false);
    expect(canSynthesize({ width: 0, height: 10 })).toBe(false);
  });

  it("names results by their picture and signs their links", () => {
    const picture = {
      width: 1328,
      height: 1328,
      seed: 0xdeadbeef,
      transparent: true,
      format: "webp" as const,
    };
    const file = resultFileName(picture);
    expect(file).toBe("img-1328x1328-deadbeef-t.webp");
    expect(parseResultFileName(file)).toEqual(picture);
    expect(parseResultFileName("img-1x1-zz-o.png")).toBeUndefined();
    const links = new LinkSigner();
    const url = new URL(signResultUrl("http://sandbox", picture, 60, links));
    expect(url.pathname).toBe(`/__results/${file}`);
    const expires = Number(url.searchParams.get("Expires"));
    expect(expires - links.nowSeconds()).toBeGreaterThanOrEqual(59);
    expect(expires - links.nowSeconds()).toBeLessThanOrEqual(60);
    const signature = url.searchParams.get("Signature") ?? "";
    expect(links.verify(file, expires, signature)).toBe(true);
    expect(links.verify(file, expires + 1, signature)).toBe(false);
    expect(new LinkSigner().verify(file, expires, signature)).toBe(false);
  });

  it("reads PNG colour modes, including tRNS transparency", async () => {
    const rgba = await synthesize({ width: 4, height: 4, seed: 1, format: "png" });
    expect(readImageFacts(rgba)?.mode).toBe("RGBA");
    const rgb = new PNG({ width: 2, height: 2, colorType: 2 });
    rgb.data.fill(255);
    expect(readImageFacts(PNG.sync.write(rgb, { colorType: 2 }))?.mode).toBe("RGB");
    expect(readImageFacts(Buffer.from("hello, not an image"))).toBeUndefined();
    expect(sniffKind(Buffer.from("GIF89a..."))).toBe("gif");
  });
});
