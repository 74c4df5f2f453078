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
