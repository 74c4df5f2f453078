/**
 * @module store/ids
 * Record identifiers: a short prefix, a time component that sorts, and random base62.
 */
import { randomFillSync } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random bytes are drawn 4 KiB at a time: one system call serves many ids. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** `length` characters drawn uniformly from base62 (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBase62(12)}`;
}

/**
 * `length` base62 characters (at least 12) that sort by creation time: 8 characters of
 * milliseconds, then random. Rows keyed by such ids are appended at the end of their indexes
 * instead of landing on a random page, which keeps the writes of a request on few pages.
 */
export function sortableBase62(length: number): string {
  let time = "";
  for (let rest = Date.now(); time.length < 8; rest = Math.floor(rest / 62)) {
    time = BASE62[rest % 62] + time;
  }
  return time + randomBase62(length - 8);
}
