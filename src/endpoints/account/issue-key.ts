/**
 * @module endpoints/account/issue-key
 * Creating an API key: the secret is generated, returned once, and only its hash is stored.
 * Shared by registration, the account endpoints, the admin endpoints and the CLI. Allowlists are
 * checked against the catalog, and a key creating a key cannot grant more than it holds.
 */
import { Type } from "@sinclair/typebox";
import { generateApiKey, hashSecret, visiblePrefix } from "../../auth/index.ts";
import { formatUsd } from "../../billing/index.ts";
import type { Catalog } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import {
  type ApiKeyRecord,
  type AuditOrigin,
  SPEND_LIMIT_PERIODS,
  type SpendLimitPeriod,
  type Store,
} from "../../store/index.ts";

/** Upper bounds of a key's numeric options (each fits a 32-bit integer column). */
export const MAX_KEY_RPM = 1_000_000_000;
export const MAX_KEY_TPM = 1_000_000_000;
export const MAX_KEY_CONCURRENCY = 1_000_000;
/** The latest expiry a key may have: 9999-12-31T23:59:59Z (Unix seconds). */
export const MAX_EXPIRES_AT_SECONDS = 253_402_300_799;
const MAX_EXPIRES_AT_MS = MAX_EXPIRES_AT_SECONDS * 1000;
/** The highest spend cap a key may have: one billion dollars, in micro-USD. */
export const MAX_KEY_SPEND_LIMIT_MICROS = 1_000_000_000_000_000;
/** Keys minted by keys nest at most this deep (a key made by a session or admin is level 1). */
export const MAX_KEY_DEPTH = 10;

function limit(maximum: number) {
  return Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum }), Type.Null()]));
}

export const KeyOptions = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    models: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), {
        maxItems: 1000,
        description: "Allowed model ids; empty or absent means all.",
      }),
    ),
    model_aliases: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 200 }), {
        maxProperties: 1000,
        description:
          "Requested model id (or `prefix*` pattern) → catalog model id, for this key; applied before the deployment's `model_aliases`.",
      }),
    ),
    rpm: limit(MAX_KEY_RPM),
    tpm: limit(MAX_KEY_TPM),
    concurrency: limit(MAX_KEY_CONCURRENCY),
    spend_limit_micros: Type.Optional(
      Type.Union([
        Type.Integer({
          minimum: 0,
          maximum: MAX_KEY_SPEND_LIMIT_MICROS,
          description:
            "The most this key, with every key minted below it, may spend per `spend_limit_period` (micro-USD); null or absent: no cap.",
        }),
        Type.Null(),
      ]),
    ),
    spend_limit_period: Type.Optional(
      Type.Union([
        Type.Union(
          [...SPEND_LIMIT_PERIODS, "lifetime" as const].map((period) => Type.Literal(period)),
          {
            description:
              "`daily`, `weekly` (from Monday) or `monthly`, in UTC; `lifetime`, null or absent: the key's lifetime.",
          },
        ),
        Type.Null(),
      ]),
    ),
    expires_at: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 64, description: "ISO 8601 time, 1970 to 9999." }),
        Type.Integer({
          minimum: 0,
          maximum: MAX_EXPIRES_AT_SECONDS,
          description: "Unix seconds.",
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

export interface KeyInput {
  name?: string;
  models?: string[];
  model_aliases?: Record<string, string>;
  rpm?: number | null;
  tpm?: number | null;
  concurrency?: number | null;
  spend_limit_micros?: number | null;
  spend_limit_period?: SpendLimitPeriod | "lifetime" | null;
  /** ISO 8601 string or Unix seconds. */
  expires_at?: string | number | null;
  /** The expiry in Unix ms, already bounded (set by `limitToCallerKey`; wins over `expires_at`). */
  expiresAtMs?: number | null;
  /** The key minting this one (set by `limitToCallerKey`). */
  parentKeyId?: string | null;
}

function invalidExpiry(detail: string): GatewayError {
  return new GatewayError(
    "invalid_parameter",
    { detail: `Invalid 'expires_at': ${detail}` },
    { param: "expires_at" },
  );
}

/** Unix ms of an `expires_at` input; anything outside 1970–9999 is a 400. */
export function parseExpiry(value: KeyInput["expires_at"]): number | null {
  if (value === undefined || value === null) return null;
  const millis = typeof value === "number" ? value * 1000 : Date.parse(value);
  if (Number.isNaN(millis)) throw invalidExpiry("expected an ISO 8601 time.");
  if (!Number.isSafeInteger(millis) || millis < 0 || millis > MAX_EXPIRES_AT_MS)
    throw invalidExpiry("must be between 1970 and 9999.");
  return millis;
}

/** Checks that every alias targets a catalog model and stores canonical target ids. */
export function resolveKeyAliases(catalog: Catalog, aliases: Record<string, string> | undefined) {
  if (aliases === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(aliases).map(([requested, target]) => {
      const model = catalog.get(target);
      if (!model) {
        throw new GatewayError(
          "invalid_parameter",
          { detail: `Invalid 'model_aliases.${requested}': there is no model '${target}'.` },
          { param: `model_aliases.${requested}` },
        );
      }
      return [requested, model.id];
    }),
  );
}

/** Checks an allowlist against the catalog and stores canonical ids (aliases resolved). */
export function resolveKeyModels(catalog: Catalog, models: string[] | undefined) {
  if (models === undefined) return undefined;
  const ids = models.map((id, index) => {
    const model = catalog.get(id);
    if (!model) {
      throw new GatewayError(
        "invalid_parameter",
        { detail: `Invalid 'models[${index}]': there is no model '${id}'.` },
        { param: `models[${index}]` },
      );
    }
    return model.id;
  });
  return [...new Set(ids)];
}

function tighter(
  name: "rpm" | "tpm" | "concurrency",
  wanted: number | null | undefined,
  cap: number | null,
) {
  if (cap === null) return wanted;
  if (wanted === undefined || wanted === null) return cap;
  if (wanted > cap) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid '${name}': the calling key is limited to ${cap}.` },
      { param: name },
    );
  }
  return wanted;
}

/**
 * Control characters (a newline) and bidirectional formatting characters (a right-to-left
 * override) in a key's name would make it read as something else where it is shown — a list, the
 * console's revoke prompt.
 */
function misleadingIn(name: string): boolean {
  for (let at = 0; at < name.length; at++) {
    const code = name.charCodeAt(at);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true; // C0, DEL, C1
    if (code === 0x061c || code === 0x200e || code === 0x200f) return true; // marks
    if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) return true;
  }
  return false;
}

function checkKeyName(input: KeyInput): void {
  if (input.name === undefined || !misleadingIn(input.name)) return;
  throw new GatewayError(
    "invalid_parameter",
    {
      detail:
        "Invalid 'name': control characters and bidirectional formatting characters are not allowed.",
    },
    { param: "name" },
  );
}

/** A period without a cap is a mistake worth a 400, not a key without a cap. */
function checkSpendLimitInput(input: KeyInput): void {
  if (
    input.spend_limit_period !== undefined &&
    input.spend_limit_period !== null &&
    input.spend_limit_period !== "lifetime" &&
    (input.spend_limit_micros === undefined || input.spend_limit_micros === null)
  ) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: "Invalid 'spend_limit_period': set 'spend_limit_micros' with it." },
      { param: "spend_limit_period" },
    );
  }
}

/**
 * A minted key's spend cap is at most its parent's: absent, it takes the parent's cap and
 * period; above it, a 400. (The parent's cap counts the child's spend as well, whatever the
 * child's own cap.)
 */
function tighterSpendLimit(input: KeyInput, caller: ApiKeyRecord) {
  const cap = caller.spendLimitMicros ?? null;
  const wanted = input.spend_limit_micros;
  if (cap === null) return {};
  if (wanted === undefined || wanted === null)
    return { spend_limit_micros: cap, spend_limit_period: caller.spendLimitPeriod ?? null };
  if (wanted > cap) {
    const period = caller.spendLimitPeriod ?? "lifetime";
    throw new GatewayError(
      "invalid_parameter",
      {
        detail: `Invalid 'spend_limit_micros': the calling key's spend is limited to ${cap} micro-USD (${formatUsd(cap)}, ${period}); a key it mints cannot have a higher cap.`,
      },
      { param: "spend_limit_micros" },
    );
  }
  return {};
}

/**
 * A key that creates a key cannot hand out more than it has: the new key inherits the caller
 * key's model allowlist, rate limits, spend cap and expiry as upper bounds (session tokens have
 * none), and records the caller as its parent.
 */
export function limitToCallerKey(input: KeyInput, caller: ApiKeyRecord | undefined): KeyInput {
  checkSpendLimitInput(input);
  if (!caller) return input;
  if ((caller.ancestors?.length ?? 0) + 1 >= MAX_KEY_DEPTH) {
    throw new GatewayError("invalid_request", {
      detail: `Keys minted by keys nest at most ${MAX_KEY_DEPTH} deep; mint this key from a key higher up.`,
    });
  }
  let models = input.models;
  if (caller.models.length > 0) {
    const outside = (models ?? []).find((id) => !caller.models.includes(id));
    if (outside !== undefined)
      throw new GatewayError("model_not_allowed", { model: outside }, { param: "models" });
    if (!models || models.length === 0) models = caller.models;
  }
  let expiresAtMs = parseExpiry(input.expires_at);
  if (caller.expiresAt !== null) {
    if (expiresAtMs !== null && expiresAtMs > caller.expiresAt) {
      throw invalidExpiry("the calling key expires earlier.");
    }
    expiresAtMs ??= Math.max(0, Math.min(caller.expiresAt, MAX_EXPIRES_AT_MS));
  }
  return {
    ...input,
    models,
    rpm: tighter("rpm", input.rpm, caller.rpm),
    tpm: tighter("tpm", input.tpm, caller.tpm),
    concurrency: tighter("concurrency", input.concurrency, caller.concurrency),
    ...tighterSpendLimit(input, caller),
    expiresAtMs,
    parentKeyId: caller.id,
  };
}

/** ISO time of a stored Unix ms value; a value outside the range of dates is clamped to it. */
function isoTime(millis: number | null): string | null {
  if (millis === null || Number.isNaN(millis)) return null;
  return new Date(Math.max(-8.64e15, Math.min(8.64e15, Math.trunc(millis)))).toISOString();
}

/** The public form of a key; never throws, whatever the stored row holds. */
export function describeKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    object: "api_key",
    name: record.name,
    prefix: record.prefix,
    account_id: record.accountId,
    parent_key_id: record.parentKeyId,
    models: record.models,
    model_aliases: record.modelAliases,
    rpm: record.rpm,
    tpm: record.tpm,
    concurrency: record.concurrency,
    spend_limit_micros: record.spendLimitMicros ?? null,
    spend_limit_period:
      record.spendLimitMicros === null || record.spendLimitMicros === undefined
        ? null
        : (record.spendLimitPeriod ?? "lifetime"),
    expires_at: isoTime(record.expiresAt),
    revoked: record.revokedAt !== null,
    revoked_at: isoTime(record.revokedAt),
    created_at: isoTime(record.createdAt) ?? new Date(0).toISOString(),
  };
}

/** Creates a key; `secret` replaces the random one (bootstrap `SWITCHYARD_ADMIN_KEY`). */
export async function issueKey(
  store: Store,
  accountId: string,
  input: KeyInput,
  secret: string = generateApiKey(),
  audit?: AuditOrigin,
): Promise<{ key: string; record: ApiKeyRecord }> {
  checkKeyName(input);
  checkSpendLimitInput(input);
  const record = await store.createKey(
    {
      accountId,
      name: input.name ?? "default",
      keyHash: hashSecret(secret),
      prefix: visiblePrefix(secret),
      models: input.models ?? [],
      modelAliases: input.model_aliases ?? {},
      rpm: input.rpm ?? null,
      tpm: input.tpm ?? null,
      concurrency: input.concurrency ?? null,
      expiresAt:
        input.expiresAtMs !== undefined ? input.expiresAtMs : parseExpiry(input.expires_at),
      parentKeyId: input.parentKeyId ?? null,
      spendLimitMicros: input.spend_limit_micros ?? null,
      spendLimitPeriod:
        input.spend_limit_period === "lifetime" ? null : (input.spend_limit_period ?? null),
    },
    audit,
  );
  return { key: secret, record };
}
