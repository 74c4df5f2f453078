/**
 * @module console/types
 * The shapes of the API answers the console reads (only the fields it uses).
 */

export interface Account {
  id: string;
  email: string;
  role: "user" | "admin";
  balance_micros: number;
  created_at: string;
  suspended_at: string | null;
  suspended_reason: string | null;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  account_id: string;
  models: string[];
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  expires_at: string | null;
  revoked: boolean;
  created_at: string;
  key?: string;
}

export interface List<T> {
  object: "list";
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}

export interface Balance {
  balance_micros: number;
  held_micros: number;
  available_micros: number;
  currency: string;
}

export interface LedgerEntry {
  id: string;
  kind: string;
  amount_micros: number;
  balance_after_micros?: number;
  reason: string | null;
  created_at: string;
}

export interface UsageRecord {
  request_id: string;
  model: string;
  endpoint: string;
  key_id: string | null;
  account_id?: string;
  status: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  latency_ms: number | null;
  created_at: string;
}

export interface UsageGroup {
  day?: string;
  model?: string;
  key?: string;
  account?: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
}

export interface Model {
  id: string;
  display_name: string;
  owned_by: string;
  endpoint: string;
  family: string;
  capabilities: Record<string, unknown>;
  pricing: Record<string, unknown>;
  available: boolean;
}

export interface VideoTask {
  id: string;
  model?: string;
  status: string;
  created_at?: string | number;
  error?: { message?: string } | null;
}
