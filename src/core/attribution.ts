/**
 * @module core/attribution
 * Who a request was made for, as its client tells: OpenAI's `user` (chat completions,
 * embeddings, images, speech, responses) and `metadata` string pairs (chat completions,
 * responses), or Anthropic's `metadata.user_id` (messages). Read once per request from the
 * validated body, checked for size, and written on the usage record by the settlement, where
 * reports filter by it. Reading is a few property accesses: nothing is copied but the pairs.
 */
import type { UsageAttribution } from "../billing/index.ts";
import { GatewayError } from "../errors/index.ts";

/** OpenAI's limits on `metadata`: 16 pairs, keys up to 64 characters, values up to 512. */
export const METADATA_MAX_PAIRS = 16;
export const METADATA_KEY_MAX = 64;
export const METADATA_VALUE_MAX = 512;
/** The longest end-user id kept (Anthropic's limit on `metadata.user_id`). */
export const END_USER_MAX = 256;

function invalid(param: string, detail: string): GatewayError {
  return new GatewayError(
    "invalid_parameter",
    { detail: `Invalid '${param}': ${detail}.` },
    { param },
  );
}

function checkedUser(value: unknown, param: string): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  if (value.length > END_USER_MAX)
    throw invalid(param, `must be at most ${END_USER_MAX} characters long`);
  return value;
}

function checkedMetadata(value: unknown): Record<string, string> | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length === 0) return undefined;
  if (entries.length > METADATA_MAX_PAIRS)
    throw invalid("metadata", `must have at most ${METADATA_MAX_PAIRS} pairs`);
  for (const [key, item] of entries) {
    if (key.length > METADATA_KEY_MAX)
      throw invalid("metadata", `keys must be at most ${METADATA_KEY_MAX} characters long`);
    if (typeof item !== "string") throw invalid(`metadata.${key}`, "expected string");
    if (item.length > METADATA_VALUE_MAX)
      throw invalid(`metadata.${key}`, `must be at most ${METADATA_VALUE_MAX} characters long`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

/** OpenAI's `user` alone: the default (its `metadata` is read where the schema declares it). */
export function openAIUserAttribution(body: unknown): UsageAttribution | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const endUser = checkedUser((body as { user?: unknown }).user, "user");
  return endUser === undefined ? undefined : { endUser, metadata: null };
}

/** OpenAI's protocol where the body has `metadata` (chat completions, responses): both. */
export function openAIAttribution(body: unknown): UsageAttribution | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const { user, metadata } = body as { user?: unknown; metadata?: unknown };
  if (user === undefined && metadata === undefined) return undefined;
  const endUser = checkedUser(user, "user");
  const pairs = checkedMetadata(metadata);
  return endUser === undefined && pairs === undefined
    ? undefined
    : { endUser: endUser ?? null, metadata: pairs ?? null };
}

/** Anthropic's protocol: `metadata.user_id` (its only metadata field). */
export function anthropicAttribution(body: unknown): UsageAttribution | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const metadata = (body as { metadata?: unknown }).metadata;
  if (metadata === null || typeof metadata !== "object") return undefined;
  const endUser = checkedUser((metadata as { user_id?: unknown }).user_id, "metadata.user_id");
  return endUser === undefined ? undefined : { endUser, metadata: null };
}
