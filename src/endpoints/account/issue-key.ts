/**
 * @module endpoints/account/issue-key
 * Creating an API key: the secret is generated, returned once, and only its hash is stored.
 * Shared by registration, the account endpoints, the admin endpoints and the CLI.
 */
import { Type } from "@sinclair/typebox";
import { generateApiKey, hashSecret, visiblePrefix } from "../../auth/index.ts";
import { GatewayError } from "../../errors/index.ts";
import type { ApiKeyRecord, Store } from "../../store/index.ts";

export const KeyOptions = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    models: Type.Optional(
      Type.Array(Type.String(), { description: "Allowed model ids; empty or absent means all." }),
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

export function describeKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    object: "api_key",
    name: record.name,
    prefix: record.prefix,
    account_id: record.accountId,
    models: record.models,
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
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    concurrency: input.concurrency ?? null,
    expiresAt: parseExpiry(input.expires_at),
  });
  return { key: secret, record };
}
