/**
 * @module config/schema
 * The configuration schema: `switchyard.yaml` (optional) overlaid with environment variables.
 * Every setting has a default, so the gateway starts with no configuration at all.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ModelEntry, VendorEntry } from "../catalog/schema.ts";

function attemptLimit(fallback: number) {
  return Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], {
    default: fallback,
  });
}

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
        /**
         * Seconds after SIGTERM during which the listener stays open and serves while `/readyz`
         * answers 503, so a load balancer stops sending traffic before connections are refused.
         */
        drain_delay_seconds: Type.Integer({ minimum: 0, maximum: 3600, default: 5 }),
        /** A `: keep-alive` comment is sent on a stream silent this long (milliseconds). */
        sse_heartbeat_ms: Type.Integer({ minimum: 50, default: 15_000 }),
        /** Deepest nesting of objects and arrays a JSON body may have (400 `json_too_deep`). */
        max_json_depth: Type.Integer({ minimum: 1, maximum: 1000, default: 64 }),
        /**
         * Most values a JSON body may hold (400 `json_too_many_values`), counted before parsing:
         * parsing millions of tiny values holds the event loop for most of a second.
         */
        max_json_values: Type.Integer({ minimum: 1000, maximum: 10_000_000, default: 500_000 }),
        /** A client must send all request headers within this time (milliseconds). */
        headers_timeout_ms: Type.Integer({ minimum: 100, default: 20_000 }),
        /** A client must send the whole request, body included, within this time; not the answer. */
        request_timeout_ms: Type.Integer({ minimum: 100, default: 120_000 }),
        /** An idle keep-alive connection is closed after this time (milliseconds). */
        keep_alive_timeout_ms: Type.Integer({ minimum: 100, default: 72_000 }),
        /**
         * Gateway processes sharing the port (`start --workers` overrides it); more than one
         * needs PostgreSQL. `auto`: one per CPU.
         */
        workers: Type.Union([Type.Integer({ minimum: 1, maximum: 64 }), Type.Literal("auto")], {
          default: 1,
        }),
        /**
         * Browser origins allowed to call the API (CORS), e.g. `https://app.example.com`; `*`
         * allows any. Empty: no CORS headers at all.
         */
        cors_origins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        /**
         * Which proxies' `X-Forwarded-For` gives the client's address (login and sign-up limits
         * count per address): `false` none, `true` any, a hop count, or addresses and CIDRs.
         */
        trust_proxy: Type.Union(
          [
            Type.Boolean(),
            Type.Integer({ minimum: 1, maximum: 10 }),
            Type.Array(Type.String({ minLength: 1 })),
          ],
          { default: false },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    database_url: Type.String({ default: "data/switchyard.sqlite" }),
    redis: Type.Object(
      {
        /**
         * Redis for what instances share (quota counters and leases, change notifications);
         * unset: quotas are per process and changes are polled from the database.
         */
        url: Type.Optional(Type.String()),
        /** While Redis cannot be reached: admit requests unchecked (`open`) or refuse them (503). */
        on_unavailable: Type.Union([Type.Literal("open"), Type.Literal("closed")], {
          default: "open",
        }),
        /** Prefix of every key and channel, so several gateways can share one Redis. */
        key_prefix: Type.String({ default: "switchyard:" }),
        /** A Redis command that takes longer fails (and `on_unavailable` applies). */
        command_timeout_ms: Type.Integer({ minimum: 10, maximum: 60_000, default: 500 }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** How long start-up waits for a database that cannot be reached yet, retrying with backoff. */
    database_wait_seconds: Type.Integer({ minimum: 0, maximum: 86_400, default: 30 }),
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
        /**
         * Keys an account may create itself (`POST /v1/account/keys`), revoked ones included:
         * every key is listed, so the lists stay bounded. Admins and the CLI are not limited.
         */
        max_keys_per_account: Type.Integer({ minimum: 1, default: 1000 }),
        key_cache_ttl_seconds: Type.Integer({ minimum: 0, default: 60 }),
        /**
         * Attempt limits (429 `too_many_attempts` beyond them), each a burst of N refilled at N
         * per period; null switches one off. Per client address (IPv6 by /64) and per email.
         */
        login_attempts_per_minute: attemptLimit(30),
        login_attempts_per_email_per_minute: attemptLimit(10),
        register_attempts_per_hour: attemptLimit(20),
        register_attempts_per_email_per_hour: attemptLimit(5),
        /** Credit code redemptions from one client address, and by one account, per minute. */
        redeem_attempts_per_minute: attemptLimit(10),
        redeem_attempts_per_account_per_minute: attemptLimit(5),
        /** Addresses and emails tracked at most (least recently seen are forgotten first). */
        attempt_tracking_max_entries: Type.Integer({ minimum: 100, default: 100_000 }),
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
        /** Tokens per minute per key when the key sets none; null means unlimited. */
        default_tpm: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { default: null }),
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
        /**
         * Names this process in its in-flight rows. A process restarted with the same id settles
         * what its previous run left at once; others' are settled when their heartbeat stops
         * (`instance_timeout_seconds`). Defaults to a random id per start.
         */
        instance_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        /** An instance whose heartbeat is older than this is dead; its requests are settled. */
        instance_timeout_seconds: Type.Integer({ minimum: 5, maximum: 3600, default: 30 }),
        /** A long stream records what it has delivered this often (the charge after a crash). */
        checkpoint_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 5 }),
        /**
         * When the balance cannot cover a chat request's output cap: `lower_output_cap` sends a
         * lower cap that it covers (header `x-switchyard-output-cap-lowered`), `reject` answers
         * 402. Either way 402 when not even `min_output_tokens` fit.
         */
        when_balance_short: Type.Union([Type.Literal("lower_output_cap"), Type.Literal("reject")], {
          default: "lower_output_cap",
        }),
        min_output_tokens: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 16 }),
        /** Highest balance an account may hold; credits above it are refused. */
        max_balance_micros: Type.Integer({
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          default: 1_000_000_000_000_000,
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    upstream: Type.Object(
      {
        connect_timeout_ms: Type.Integer({ minimum: 1, default: 10_000 }),
        first_byte_timeout_ms: Type.Integer({ minimum: 1, default: 120_000 }),
        idle_timeout_ms: Type.Integer({ minimum: 1, default: 120_000 }),
        /** The largest whole upstream answer read (JSON, a downloaded file); larger is a 502. */
        max_response_bytes: Type.Integer({ minimum: 1024, default: 64 * 1024 * 1024 }),
        /** The most bytes read from one upstream event stream; past it the stream is cut. */
        max_stream_bytes: Type.Integer({ minimum: 1024, default: 256 * 1024 * 1024 }),
      },
      { additionalProperties: false, default: {} },
    ),
    tasks: Type.Object(
      {
        /** How often the task engine looks for due polls and webhooks (milliseconds). */
        tick_ms: Type.Integer({ minimum: 10, maximum: 60_000, default: 500 }),
        /** First interval between polls of a task; it grows with the task's age. */
        poll_min_interval_ms: Type.Integer({ minimum: 10, maximum: 600_000, default: 1000 }),
        /** The longest interval between two polls of a task. */
        poll_max_interval_ms: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
        /** Task queries per second per vendor from one instance (DashScope allows 20). */
        vendor_polls_per_second: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
        /** A task not final after this long is `expired` and its hold released. */
        max_age_seconds: Type.Integer({ minimum: 10, maximum: 7 * 86_400, default: 7200 }),
        /** A task the vendor never acknowledged (the process died mid-submission) fails after this. */
        submit_grace_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 300 }),
        /** How long one instance keeps a task to itself while polling it. */
        lease_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
      },
      { additionalProperties: false, default: {} },
    ),
    webhooks: Type.Object(
      {
        /** Deliver to private, unique-local, CGNAT and link-local networks (never metadata). */
        allow_private_addresses: Type.Boolean({ default: false }),
        /** Deliver to loopback addresses (127.0.0.0/8, ::1): for tests and local development. */
        allow_loopback: Type.Boolean({ default: false }),
        /** Time allowed for one delivery attempt (milliseconds). */
        timeout_ms: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
        /** Delay after the first failed attempt; each next one is three times longer. */
        retry_base_ms: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 10_000 }),
        /** The longest delay between two attempts. */
        retry_max_ms: Type.Integer({ minimum: 1, maximum: 86_400_000, default: 3_600_000 }),
        /** No attempt is made later than this after the first. */
        give_up_after_seconds: Type.Integer({ minimum: 1, maximum: 7 * 86_400, default: 86_400 }),
      },
      { additionalProperties: false, default: {} },
    ),
    mcp: Type.Object(
      {
        /** Serve the MCP endpoint at `/mcp`. */
        enabled: Type.Boolean({ default: true }),
        /** A session without a request for this long is closed (the client starts a new one). */
        session_idle_seconds: Type.Integer({ minimum: 10, maximum: 86_400, default: 1800 }),
        /** Most open sessions per key; a new one closes the key's least recently used. */
        max_sessions_per_key: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
        /**
         * Most open sessions per account, its keys minted by keys included (each key may mint
         * more); a new one closes the account's least recently used.
         */
        max_sessions_per_account: Type.Integer({ minimum: 1, maximum: 100_000, default: 64 }),
        /** Browser origins allowed to call `/mcp` (a request with another `Origin` gets 403). */
        allowed_origins: Type.Array(Type.String(), { default: [] }),
      },
      { additionalProperties: false, default: {} },
    ),
    metrics: Type.Object(
      {
        /** Keep metrics and serve `GET /metrics` (an admin key or `token` required). */
        enabled: Type.Boolean({ default: true }),
        /** A bearer token that may read `/metrics` besides admin keys (a Prometheus server's). */
        token: Type.Optional(Type.String({ minLength: 16 })),
        /** `host:port` of a separate listener serving `/metrics` without a token; unset: none. */
        listen: Type.Optional(Type.String({ minLength: 2 })),
      },
      { additionalProperties: false, default: {} },
    ),
    tracing: Type.Object(
      {
        /** OTLP/HTTP base URL of a collector (`http://collector:4318`); unset: tracing is off. */
        endpoint: Type.Optional(Type.String({ minLength: 1 })),
        /** `service.name` of the spans. */
        service_name: Type.String({ minLength: 1, default: "switchyard" }),
        /** Share of new traces kept (0–1); a client's `traceparent` sampled flag is followed. */
        sample_ratio: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
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
    routing: Type.Object(
      {
        /** Upstream health: a route that keeps failing is skipped for a while (upstream-health.md). */
        circuit_breaker: Type.Object(
          {
            enabled: Type.Boolean({ default: true }),
            /** Consecutive failures of a route (5xx, 429, timeouts, connection errors) that open it. */
            failure_threshold: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
            /** How long an opened route is skipped before one probe request is let through. */
            cooldown_seconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 30 }),
            /** The longest cooldown: each failed probe doubles the last one, up to this. */
            max_cooldown_seconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    budgets: Type.Object(
      {
        /**
         * Fractions of an account's `monthly_budget_micros` at which a soft-limit alert goes out
         * (logged, and sent to the account's budget webhook), once each per month.
         */
        alert_thresholds: Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 10 }), {
          maxItems: 20,
          default: [0.5, 0.8, 1],
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    console: Type.Object(
      {
        /** Serve the web console at `/console/`, and redirect `/` there. */
        enabled: Type.Boolean({ default: true }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
