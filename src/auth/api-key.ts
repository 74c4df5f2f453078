/**
 * @module auth/api-key
 * The API key format (`sk-` + 48 base62 characters), its SHA-256 hash (the only form stored),
 * and the short visible prefix shown in listings.
 */
import { hash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "../store/index.ts";

export const API_KEY_PATTERN = /^sk-[0-9A-Za-z]{40,}$/;

export function generateApiKey(): string {
  return `sk-${randomBase62(48)}`;
}

export function hashSecret(secret: string): string {
  // The one-shot form: a third of `createHash(...).update(...).digest(...)`'s cost per request.
  return hash("sha256", secret, "hex");
}

/** The part of a key that may be shown after creation, e.g. `sk-4fQz…`. */
export function visiblePrefix(key: string): string {
  return `${key.slice(0, 7)}…`;
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Reads a bearer token from `Authorization` or, for Anthropic clients, `x-api-key`. */
export function readBearer(
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === "string") {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const apiKey = headers["x-api-key"];
  return typeof apiKey === "string" && apiKey.length > 0 ? apiKey.trim() : undefined;
}
