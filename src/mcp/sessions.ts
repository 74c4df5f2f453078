/**
 * @module mcp/sessions
 * The open MCP sessions: one SDK transport and one server each, bound to the key that opened
 * it. A session idle longer than `mcp.session_idle_seconds` is closed by a sweep, a key keeps at
 * most `mcp.max_sessions_per_key` and an account (all its keys, minted ones included) at most
 * `mcp.max_sessions_per_account` (opening one more closes the least recently used of that key or
 * account), and closing the gateway closes them all. Closing goes through the transport, which aborts running calls.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface McpSession {
  id: string;
  keyId: string;
  accountId: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
}

export interface SessionStore {
  get(id: string): McpSession | undefined;
  /** Adds a session, closing the key's or the account's least recently used above the limits. */
  add(session: McpSession): void;
  /** Forgets a session (its transport closed). */
  remove(id: string): void;
  size(): number;
  /** Closes every session (shutdown). */
  closeAll(): Promise<void>;
}

export function createSessionStore(options: {
  idleMs: number;
  maxPerKey: number;
  maxPerAccount: number;
  now?: () => number;
}): SessionStore {
  const now = options.now ?? Date.now;
  const sessions = new Map<string, McpSession>();
  const close = (session: McpSession) => {
    sessions.delete(session.id);
    void session.transport.close().catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const oldest = now() - options.idleMs;
      for (const session of [...sessions.values()]) if (session.lastUsed < oldest) close(session);
    },
    Math.min(60_000, Math.max(1000, options.idleMs / 4)),
  );
  sweep.unref();
  return {
    get(id) {
      const session = sessions.get(id);
      if (session) session.lastUsed = now();
      return session;
    },
    add(session) {
      sessions.set(session.id, session);
      const trim = (same: (entry: McpSession) => boolean, limit: number) => {
        const matching = [...sessions.values()]
          .filter(same)
          .sort((a, b) => a.lastUsed - b.lastUsed);
        for (const extra of matching.slice(0, Math.max(0, matching.length - limit))) close(extra);
      };
      trim((entry) => entry.keyId === session.keyId, options.maxPerKey);
      trim((entry) => entry.accountId === session.accountId, options.maxPerAccount);
    },
    remove(id) {
      sessions.delete(id);
    },
    size: () => sessions.size,
    async closeAll() {
      clearInterval(sweep);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((session) => session.transport.close().catch(() => undefined)));
    },
  };
}
