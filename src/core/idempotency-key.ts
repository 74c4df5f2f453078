/**
 * @module core/idempotency-key
 * The `Idempotency-Key` request header, read the same way wherever a retried request must not
 * act twice (video submissions, admin credits): absent or empty means none; otherwise at most
 * 255 printable ASCII characters without spaces, or a `400 invalid_parameter` naming the header.
 * A replayed answer carries `Idempotent-Replayed: true`.
 */
import { GatewayError } from "../errors/index.ts";

const MAX_IDEMPOTENCY_KEY = 255;

/** The response header that marks an answer as the first request's, replayed. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";

/** The request's idempotency key, or null when it sent none. */
export function readIdempotencyKey(
  headers: Record<string, string | string[] | undefined>,
): string | null {
  const raw = headers["idempotency-key"];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value === "") return null;
  if (value.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(value))
    throw new GatewayError(
      "invalid_parameter",
      {
        detail: `Invalid 'Idempotency-Key' header: at most ${MAX_IDEMPOTENCY_KEY} printable characters without spaces.`,
      },
      { param: "Idempotency-Key" },
    );
  return value;
}
