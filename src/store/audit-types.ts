/**
 * @module store/audit-types
 * The audit trail: who changed what, when, and from what to what. One event per administrative
 * or account-management action (accounts, credits and debits, keys, budgets, webhook secrets, logins,
 * configuration reloads). Snapshots hold the changed fields only and never a secret.
 */
import type { AccountRole } from "./types.ts";

/**
 * How the actor was identified: an API key, a login session, a password (login), no credential
 * (registration), the command line, the gateway itself (bootstrap, a watched configuration file) or a signal (SIGHUP).
 */
export type AuditActorType =
  | "key"
  | "session"
  | "password"
  | "anonymous"
  | "cli"
  | "system"
  | "signal";

export interface AuditActor {
  type: AuditActorType;
  accountId?: string | null;
  keyId?: string | null;
  role?: AccountRole | null;
  /** The client address as the HTTP server saw it (`server.trust_proxy` applies). */
  ip?: string | null;
}

export interface AuditTarget {
  /** `account`, `api_key`, `webhook_secret`, `config`, … */
  type: string;
  id: string | null;
}

/** Who acts and why: what a store method that records its own change is given. */
export interface AuditOrigin {
  actor: AuditActor;
  requestId?: string | null;
  reason?: string | null;
}

/** A JSON snapshot of the changed fields (secrets are dropped when it is written). */
export type AuditSnapshot = Record<string, unknown>;

export interface NewAuditEvent extends AuditOrigin {
  /** Stable dotted name: `account.create`, `account.credit`, `key.revoke`, `config.reload`, … */
  action: string;
  target: AuditTarget;
  before?: AuditSnapshot | null;
  after?: AuditSnapshot | null;
}

export interface AuditEvent {
  /** `aud_…` */
  id: string;
  /** Insertion order, newest highest: the list's sort key. */
  seq: number;
  createdAt: number;
  action: string;
  actor: {
    type: AuditActorType;
    accountId: string | null;
    keyId: string | null;
    role: AccountRole | null;
    ip: string | null;
  };
  target: AuditTarget;
  before: AuditSnapshot | null;
  after: AuditSnapshot | null;
  reason: string | null;
  requestId: string | null;
}

export interface AuditQuery {
  /** Events whose actor is this account. */
  actorAccountId?: string;
  action?: string;
  /** Events whose target has this id. */
  targetId?: string;
  /** Unix ms, inclusive. */
  from?: number;
  /** Unix ms, exclusive. */
  to?: number;
  /** Only events older than this `seq` (the previous page's last). */
  beforeSeq?: number;
  limit: number;
}

export interface AuditStore {
  /** Appends one event on its own. Store methods given an `AuditOrigin` write theirs in-transaction. */
  recordAudit(event: NewAuditEvent): Promise<AuditEvent>;
  /** Events newest first. */
  listAudit(query: AuditQuery): Promise<AuditEvent[]>;
}
