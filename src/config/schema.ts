/**
 * @module config/schema
 * The configuration schema: `switchyard.yaml` (optional) overlaid with environment variables.
 * Every setting has a default, so the gateway starts with no configuration at all.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ModelEntry, VendorEntry } from "../catalog/schema.ts";

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ default: "127.0.0.1" }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        body_limit_bytes: Type.Integer({ minimum: 1024, default: 10 * 1024 * 1024 }),
        /** Public base URL printed at start-up and used in links; defaults to http://host:port. */
        public_url: Type.Optional(Type.String()),
        /** Seconds SIGTERM waits for in-flight requests before closing. */
        shutdown_grace_seconds: Type.Integer({ minimum: 0, default: 30 }),
        /** A `: keep-alive` comment is sent on a stream silent this long (milliseconds). */
        sse_heartbeat_ms: Type.Integer({ minimum: 50, default: 15_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    database_url: Type.String({ default: "data/switchyard.sqlite" }),
    log_level: Type.Union(
      ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) =>
        Type.Literal(level),
      ),
      { default: "info" },
    ),
    registration: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        signup_credit_micros: Type.Integer({ minimum: 0, default: 0 }),
      },
      { additionalProperties: false, default: {} },
    ),
    auth: Type.Object(
      {
        session_ttl_seconds: Type.Integer({ minimum: 60, default: 3600 }),
        key_cache_ttl_seconds: Type.Integer({ minimum: 0, default: 60 }),
      },
      { additionalProperties: false, default: {} },
    ),
    sandbox: Type.Object(
      {
        /** `auto`: vendors without a credential route to the in-process sandbox. */
        mode: Type.Union([Type.Literal("auto"), Type.Literal("always"), Type.Literal("never")], {
          default: "auto",
        }),
        /** Use an already running sandbox instead of starting one in process. */
        url: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: Type.Object(
      {
        /** Requests per minute per key when the key sets none; null means unlimited. */
        default_rpm: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { default: null }),
        /** Concurrent requests per key when the key sets none; null means unlimited. */
        default_concurrency: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
          default: null,
        }),
        /** A concurrency lease expires after this long even if never released. */
        lease_ttl_seconds: Type.Integer({ minimum: 1, default: 900 }),
      },
      { additionalProperties: false, default: {} },
    ),
    billing: Type.Object(
      {
        /**
         * Holds older than this are released by the periodic sweep (a crashed instance's
         * holds); with SQLite every open hold is released at start-up.
         */
        stale_hold_seconds: Type.Integer({ minimum: 60, default: 3600 }),
        /** Opening balance of the admin account created on first start (admins pay too). */
        bootstrap_credit_micros: Type.Integer({ minimum: 0, default: 100_000_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    upstream: Type.Object(
      {
        connect_timeout_ms: Type.Integer({ minimum: 1, default: 10_000 }),
        first_byte_timeout_ms: Type.Integer({ minimum: 1, default: 120_000 }),
        idle_timeout_ms: Type.Integer({ minimum: 1, default: 120_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    /**
     * Requested model id → catalog model id, for clients that ask for models by their own names
     * (a coding assistant asking for `claude-opus-4-8`). Keys may end in `*` (`claude-*`).
     * Applied before catalog ids; a key's own `model_aliases` apply before these.
     */
    model_aliases: Type.Record(Type.String(), Type.String(), { default: {} }),
    catalog: Type.Object(
      {
        /** Extra catalog files to load after the shipped ones. */
        files: Type.Array(Type.String(), { default: [] }),
        /** Vendors to add or override (same shape as `catalog/vendors.yaml`). */
        vendors: Type.Record(Type.String(), VendorEntry, { default: {} }),
        /** Models to add, or to replace a shipped entry with the same id. */
        models: Type.Array(ModelEntry, { default: [] }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
