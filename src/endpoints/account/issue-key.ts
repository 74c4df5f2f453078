/**
 * @module endpoints/account/issue-key
 * Creating an API key: the secret is generated, returned once, and only its hash is stored.
 * Shared by registration, the account endpoints, the admin endpoints and the CLI. Allowlists are
 * checked against the catalog, and a key creating a key cannot grant more than it holds.
 */
import { Type } from "@sinclair/typebox";
import { generateApiKey, hashSecret, visiblePrefix } from "../../auth/index.ts";
import type { Catalog } from "../../catalog/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { ApiKeyRecord, Store } from "../../store/index.ts";

export const KeyOptions = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    models: Type.Optional(
      Type.Array(Type.String(), { description: "Allowed model ids; empty or absent means all." }),
    ),
    model_aliases: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.String(), {
        description:
          "Requested model id (or `prefix*` pattern) → catalog model id, for this key; applied before the deployment's `model_aliases`.",
      }),
    ),
    rpm: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tpm: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    concurrency: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    expires_at: Type.Optional(
      Type.Union([Type.String({ description: "ISO 8601 time." }), Type.Integer(), Type.Null()]),
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
  /** ISO 8601 string or Unix seconds. */
  expires_at?: string | number | null;
}

function parseExpiry(value: KeyInput["expires_at"]): number | null {
  if (value === undefined || value === null) return null;
  const millis = typeof value === "number" ? value * 1000 : Date.parse(value);
  if (Number.isNaN(millis)) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: "Invalid 'expires_at': expected an ISO 8601 time." },
      { param: "expires_at" },
    );
  }
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
 * A key that creates a key cannot hand out more than it has: the new key inherits the caller
 * key's model allowlist, rate limits and expiry as upper bounds (session tokens have none).
 */
export function limitToCallerKey(input: KeyInput, caller: ApiKeyRecord | undefined): KeyInput {
  if (!caller) return input;
  let models = input.models;
  if (caller.models.length > 0) {
    const outside = (models ?? []).find((id) => !caller.models.includes(id));
    if (outside !== undefined)
      throw new GatewayError("model_not_allowed", { model: outside }, { param: "models" });
    if (!models || models.length === 0) models = caller.models;
  }
  let expiresAt = input.expires_at;
  if (caller.expiresAt !== null) {
    const wanted = parseExpiry(expiresAt);
    if (wanted !== null && wanted > caller.expiresAt) {
      throw new GatewayError(
        "invalid_parameter",
        { detail: "Invalid 'expires_at': the calling key expires earlier." },
        { param: "expires_at" },
      );
    }
    if (wanted === null) expiresAt = new Date(caller.expiresAt).toISOString();
  }
  return {
    ...input,
    models,
    rpm: tighter("rpm", input.rpm, caller.rpm),
    tpm: tighter("tpm", input.tpm, caller.tpm),
    concurrency: tighter("concurrency", input.concurrency, caller.concurrency),
    expires_at: expiresAt,
  };
}

export function describeKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    object: "api_key",
    name: record.name,
    prefix: record.prefix,
    account_id: record.accountId,
    models: record.models,
    model_aliases: record.modelAliases,
    rpm: record.rpm,
    tpm: record.tpm,
    concurrency: record.concurrency,
    expires_at: record.expiresAt === null ? null : new Date(record.expiresAt).toISOString(),
    revoked: record.revokedAt !== null,
    revoked_at: record.revokedAt === null ? null : new Date(record.revokedAt).toISOString(),
    created_at: new Date(record.createdAt).toISOString(),
  };
}

/** Creates a key; `secret` replaces the random one (bootstrap `SWITCHYARD_ADMIN_KEY`). */
export async function issueKey(
  store: Store,
  accountId: string,
  input: KeyInput,
  secret: string = generateApiKey(),
): Promise<{ key: string; record: ApiKeyRecord }> {
  const record = await store.createKey({
    accountId,
    name: input.name ?? "default",
    keyHash: hashSecret(secret),
    prefix: visiblePrefix(secret),
    models: input.models ?? [],
    modelAliases: input.model_aliases ?? {},
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    concurrency: input.concurrency ?? null,
    expiresAt: parseExpiry(input.expires_at),
  });
  return { key: secret, record };
}
