/**
 * @module tasks/webhooks/webhook-signature
 * The signature on a webhook delivery: `Switchyard-Signature: t=<unix seconds>,v1=<hex>`, where
 * the hex is HMAC-SHA256, keyed with the account's webhook secret, of `"<t>.<body>"` (the raw
 * body bytes as sent). Receivers check it with the recipe in docs/videos.md; this module is the
 * gateway's side (signing) and a reference verifier the tests hold the recipe to.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "Switchyard-Signature";

/** How far a signature's timestamp may be from the receiver's clock by default (5 minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const HEX_SHA256 = /^[0-9a-f]{64}$/;

function hmacHex(secret: string, body: string | Uint8Array, unixSeconds: number): string {
  return createHmac("sha256", secret).update(`${unixSeconds}.`).update(body).digest("hex");
}

/** The `Switchyard-Signature` header value for `body` sent at `unixSeconds`. */
export function signWebhook(
  secret: string,
  body: string | Uint8Array,
  unixSeconds: number,
): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0)
    throw new RangeError(`unixSeconds must be a non-negative integer, got ${unixSeconds}`);
  return `t=${unixSeconds},v1=${hmacHex(secret, body, unixSeconds)}`;
}

export interface VerifyOptions {
  /** Largest accepted distance between `t` and now, either way (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

interface ParsedSignature {
  timestamp: number;
  signatures: string[];
}

/** `t=…,v1=…[,v1=…]`; unknown keys (later schemes) are skipped, a malformed header is null. */
function parseSignatureHeader(header: string): ParsedSignature | null {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const equals = part.indexOf("=");
    if (equals < 0) return null;
    const key = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined || !/^\d{1,15}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === "v1") {
      signatures.push(value);
    }
  }
  if (timestamp === undefined || signatures.length === 0) return null;
  return { timestamp, signatures };
}

/**
 * Whether `header` signs `body` with `secret` (or with any of several secrets, for a receiver
 * that keeps the previous one during a rotation) within the tolerance. Any `v1` value in the
 * header may match. Never throws: a missing, malformed or stale header is simply false.
 * Comparison is constant-time in the signature bytes.
 */
export function verifyWebhookSignature(
  secret: string | readonly string[],
  body: string | Uint8Array,
  header: string | null | undefined,
  options: VerifyOptions = {},
): boolean {
  if (typeof header !== "string") return false;
  const parsed = parseSignatureHeader(header);
  if (!parsed) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - parsed.timestamp) > tolerance) return false;

  const given = parsed.signatures
    .map((value) => value.toLowerCase())
    .filter((value) => HEX_SHA256.test(value))
    .map((value) => Buffer.from(value, "hex"));
  let matched = false;
  for (const key of typeof secret === "string" ? [secret] : secret) {
    const expected = Buffer.from(hmacHex(key, body, parsed.timestamp), "hex");
    // Every candidate is compared (no early exit), so timing says nothing about which matched.
    for (const candidate of given) matched = timingSafeEqual(candidate, expected) || matched;
  }
  return matched;
}
