import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhookSignature } from "./webhook-signature.ts";

const SECRET = "whsec_4f1c2a9b7d0e";
const BODY = JSON.stringify({ id: "vid_123", status: "succeeded", seed: 42 });
const T = 1_790_000_000;
const at = (unixSeconds: number) => () => unixSeconds * 1000;

describe("signWebhook", () => {
  it("is t=<unix>,v1=<hex HMAC-SHA256 of '<t>.<body>'>", () => {
    const expected = createHmac("sha256", SECRET).update(`${T}.${BODY}`).digest("hex");
    expect(signWebhook(SECRET, BODY, T)).toBe(`t=${T},v1=${expected}`);
  });

  it("signs bytes and the same text alike", () => {
    expect(signWebhook(SECRET, Buffer.from(BODY), T)).toBe(signWebhook(SECRET, BODY, T));
  });

  it("refuses a timestamp that is not whole seconds", () => {
    expect(() => signWebhook(SECRET, BODY, 1.5)).toThrow(RangeError);
    expect(() => signWebhook(SECRET, BODY, Date.now() * 1000 * 1000)).toThrow(RangeError);
  });
});

describe("verifyWebhookSignature", () => {
  const header = signWebhook(SECRET, BODY, T);

  it("accepts its own signature, as text or raw bytes", () => {
    expect(verifyWebhookSignature(SECRET, BODY, header, { now: at(T) })).toBe(true);
    expect(verifyWebhookSignature(SECRET, Buffer.from(BODY), header, { now: at(T) })).toBe(true);
  });

  it("refuses a changed body, even by one byte or by re-serialized JSON", () => {
    expect(verifyWebhookSignature(SECRET, `${BODY} `, header, { now: at(T) })).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY.replace("42", "43"), header, { now: at(T) })).toBe(
      false,
    );
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(verifyWebhookSignature(SECRET, pretty, header, { now: at(T) })).toBe(false);
  });

  it("refuses another secret", () => {
    expect(verifyWebhookSignature("whsec_other", BODY, header, { now: at(T) })).toBe(false);
  });

  it("refuses a changed timestamp (the signature covers it)", () => {
    const moved = header.replace(`t=${T}`, `t=${T + 1}`);
    expect(verifyWebhookSignature(SECRET, BODY, moved, { now: at(T + 1) })).toBe(false);
  });

  it("refuses a signature with one hex digit changed", () => {
    const last = header.at(-1)!;
    const flipped = header.slice(0, -1) + (last === "0" ? "1" : "0");
    expect(verifyWebhookSignature(SECRET, BODY, flipped, { now: at(T) })).toBe(false);
  });

  it("holds the timestamp to the tolerance, in both directions", () => {
    expect(verifyWebhookSignature(SECRET, BODY, header, { now: at(T + 300) })).toBe(true);
    expect(verifyWebhookSignature(SECRET, BODY, header, { now: at(T + 301) })).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, header, { now: at(T - 301) })).toBe(false);
    expect(
      verifyWebhookSignature(SECRET, BODY, header, { now: at(T + 3600), toleranceSeconds: 3600 }),
    ).toBe(true);
  });

  it("accepts a header with several v1 values when one of them matches", () => {
    const valid = header.split("v1=")[1]!;
    const several = `t=${T},v1=${"0".repeat(64)},v1=${valid}`;
    expect(verifyWebhookSignature(SECRET, BODY, several, { now: at(T) })).toBe(true);
    const noneValid = `t=${T},v1=${"0".repeat(64)},v1=${"f".repeat(64)}`;
    expect(verifyWebhookSignature(SECRET, BODY, noneValid, { now: at(T) })).toBe(false);
  });

  it("accepts any of several secrets (a receiver in the middle of a rotation)", () => {
    expect(verifyWebhookSignature(["whsec_new", SECRET], BODY, header, { now: at(T) })).toBe(true);
    expect(verifyWebhookSignature(["whsec_new", "whsec_x"], BODY, header, { now: at(T) })).toBe(
      false,
    );
    expect(verifyWebhookSignature([], BODY, header, { now: at(T) })).toBe(false);
  });

  it("skips unknown schemes and tolerates spaces after commas", () => {
    const valid = header.split("v1=")[1]!;
    expect(
      verifyWebhookSignature(SECRET, BODY, `t=${T}, v0=abc, v1=${valid}`, { now: at(T) }),
    ).toBe(true);
  });

  it.each([
    ["no header", undefined],
    ["null", null],
    ["empty", ""],
    ["no timestamp", `v1=${"0".repeat(64)}`],
    ["no v1", `t=${T}`],
    ["two timestamps", `t=${T},t=${T},v1=${"0".repeat(64)}`],
    ["a timestamp that is not a number", `t=soon,v1=${"0".repeat(64)}`],
    ["a negative timestamp", `t=-${T},v1=${"0".repeat(64)}`],
    ["a part without '='", `t=${T},v1`],
    ["a short signature", `t=${T},v1=abcd`],
    ["non-hex of the right length", `t=${T},v1=${"z".repeat(64)}`],
    ["non-ASCII of the right length", `t=${T},v1=${"é".repeat(64)}`],
  ])("is false, not an exception, for %s", (_, malformed) => {
    expect(verifyWebhookSignature(SECRET, BODY, malformed, { now: at(T) })).toBe(false);
  });

  it("takes the signature's hex in either case", () => {
    expect(
      verifyWebhookSignature(
        SECRET,
        BODY,
        header.toUpperCase().replace("T=", "t=").replace("V1=", "v1="),
        { now: at(T) },
      ),
    ).toBe(true);
  });
});
