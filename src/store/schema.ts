/**
 * @module store/schema
 * Table types for Kysely. Amounts are integer micro-USD; times are Unix milliseconds.
 * The same tables serve SQLite and PostgreSQL.
 */
import type { Generated } from "kysely";

export interface AccountsTable {
  id: string;
  email: string;
  password_hash: string | null;
  role: "user" | "admin";
  balance_micros: number;
  /** Sum of open billing holds; available balance is `balance_micros - held_micros`. */
  held_micros: Generated<number>;
  created_at: number;
  /** When an operator suspended the account (null: not suspended), and why. */
  suspended_at: number | null;
  suspended_reason: string | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  /** JSON array of model ids; empty array means every model. */
  models: string;
  /** JSON object: requested model id or `*` pattern → catalog model id, for this key. */
  model_aliases: Generated<string>;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
  /** The key that minted this one (migration 0005); null for keys made by a session or admin. */
  parent_key_id: string | null;
  /** The most the key (with every key below it) may spend per period (migration 0011). */
  spend_limit_micros: number | null;
  /** `daily`, `weekly` or `monthly` (UTC); null: the cap is for the key's lifetime. */
  spend_limit_period: string | null;
}

export interface SessionsTable {
  token_hash: string;
  account_id: string;
  expires_at: number;
  created_at: number;
}

export interface LedgerEntriesTable {
  id: string;
  seq: Generated<number>;
  account_id: string;
  kind: "credit" | "debit" | "hold" | "release" | "charge" | "credit_code";
  /** Signed effect on the balance (credits positive, charges negative; holds do not move it). */
  amount_micros: number;
  /** Amount held (hold: positive; release/charge of a hold: negative). */
  hold_micros: number;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  breakdown: string | null;
  reason: string | null;
  created_at: number;
}

export interface UsageRecordsTable {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  endpoint: string;
  status: "succeeded" | "failed" | "aborted" | "interrupted";
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  images: number;
  video_seconds: number;
  characters: number;
  cost_micros: number;
  held_micros: number;
  usage_source: string | null;
  upstream_request_id: string | null;
  latency_ms: number | null;
  ttfb_ms: number | null;
  breakdown: string | null;
  created_at: number;
  /** Priced cost above the hold, not charged (a vendor that overran its cap). */
  overrun_micros: number;
  /** The output cap sent upstream when it was lowered to fit the balance. */
  output_cap_lowered_to: number | null;
  /** The end user the client named (`user`, `metadata.user_id`); migration 0010. */
  end_user: string | null;
  /** JSON object of the request's `metadata` string pairs; migration 0010. */
  metadata: string | null;
}

/** A request between its hold and its settlement (see migration 0006). */
export interface InflightRequestsTable {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  endpoint: string;
  instance_id: string;
  hold_micros: number;
  /** The least it is charged if the process dies: its input. */
  floor_micros: number;
  /** The cost of what was delivered at the last checkpoint (long streams). */
  checkpoint_micros: number;
  /** JSON usage behind `checkpoint_micros`, for the usage record. */
  checkpoint_usage: string | null;
  created_at: number;
  updated_at: number;
}

export interface InstancesTable {
  id: string;
  started_at: number;
  heartbeat_at: number;
}

/** An asynchronous video task (see migration 0007 and src/tasks). */
export interface VideoTasksTable {
  id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  /** `vendor:upstream_model` of the catalog route that took the task. */
  route: string;
  upstream_model: string;
  provider_task_id: string | null;
  status: string;
  request_body: string;
  idempotency_key: string | null;
  request_hash: string;
  duration_seconds: number;
  resolution: string;
  aspect_ratio: string | null;
  hold_micros: number;
  /** `held`, `finalizing` (final state reached, charge or release under way), `settled`, `released`. */
  billing_state: string;
  cost_micros: number;
  billed_seconds: number | null;
  provider_record: string | null;
  progress: number | null;
  video_url: string | null;
  seed: number | null;
  usage: string | null;
  error_code: string | null;
  error_message: string | null;
  webhook_url: string | null;
  /** `none`, `pending`, `delivered`, `failed`. */
  webhook_state: string;
  webhook_attempts: string | null;
  webhook_next_at: number | null;
  next_poll_at: number;
  polls: number;
  lease_owner: string | null;
  lease_until: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export interface WebhookSecretsTable {
  account_id: string;
  secret: string;
  created_at: number;
}

/** A stored Responses API answer (migration 0008), kept for GET and `previous_response_id`. */
export interface ResponsesTable {
  id: string;
  account_id: string;
  model: string;
  /** JSON: the Response object as it was answered. */
  response: string;
  /** JSON array: the items that formed its input (a continued conversation's included). */
  input_items: string;
  created_at: number;
}

/** The audit trail (migration 0009): one row per administrative action, kept until pruned. */
export interface AuditEventsTable {
  seq: Generated<number>;
  id: string;
  created_at: number;
  action: string;
  actor_type: string;
  actor_account_id: string | null;
  actor_key_id: string | null;
  actor_role: string | null;
  actor_ip: string | null;
  target_type: string;
  target_id: string | null;
  /** JSON snapshots of the changed fields; never a secret. */
  before: string | null;
  after: string | null;
  reason: string | null;
  request_id: string | null;
}

/** A prepaid credit code (migration 0012); the code itself is never stored, only its hash. */
export interface CreditCodesTable {
  id: string;
  code_hash: string;
  /** The first group of the code, shown in listings (`SWY-7KQM`). */
  prefix: string;
  amount_micros: number;
  note: string | null;
  /** The operator account that made it. */
  created_by: string | null;
  created_at: number;
  expires_at: number | null;
  redeemed_at: number | null;
  /** The account that redeemed it. */
  redeemed_by: string | null;
  revoked_at: number | null;
}

/** An account's monthly budget for soft-limit alerts (migration 0011). */
export interface AccountBudgetsTable {
  account_id: string;
  monthly_budget_micros: number;
  /** Where `budget.threshold_reached` events are sent, signed; null: logged only. */
  webhook_url: string | null;
  updated_at: number;
}

/** One soft-limit alert sent: a threshold (in basis points) reached in a month. */
export interface BudgetAlertsTable {
  account_id: string;
  period_start: number;
  threshold_bp: number;
  spent_micros: number;
  budget_micros: number;
  created_at: number;
  // The webhook delivery (migration 0016); all null for an alert without a webhook.
  webhook_url: string | null;
  webhook_body: string | null;
  /** `pending`, `delivered` or `gave_up`. */
  webhook_state: string | null;
  webhook_next_at: number | null;
  webhook_lease_until: number | null;
  webhook_attempts: number | null;
  webhook_first_at: number | null;
}

/** What an account, or a key with every key below it, was charged on one UTC day. */
export interface SpendByDayTable {
  owner_id: string;
  /** The day's UTC midnight, Unix ms. */
  day: number;
  spent_micros: number;
}

export interface Database {
  usage_records: UsageRecordsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  ledger_entries: LedgerEntriesTable;
  inflight_requests: InflightRequestsTable;
  instances: InstancesTable;
  video_tasks: VideoTasksTable;
  webhook_secrets: WebhookSecretsTable;
  responses: ResponsesTable;
  audit_events: AuditEventsTable;
  credit_codes: CreditCodesTable;
  account_budgets: AccountBudgetsTable;
  budget_alerts: BudgetAlertsTable;
  spend_by_day: SpendByDayTable;
}
