/**
 * @module mcp/sessions
 * The open MCP sessions: one SDK transport and one server each, bound to the key that opened
 * it. A session idle longer than `mcp.session_idle_seconds` is closed by a sweep, a key keeps at
 * most `mcp.max_sessions_per_key` and an account (all its keys, minted ones included) at most
 * `mcp.max_sessions_per_account` (opening one more closes the least recently used of that key or
 * account), and closing the gateway closes them all. A session with a request in flight is not
 * idle. Before a session is closed, every request still in flight (its POST still open, waiting)
 * is answered with a JSON-RPC error for its id (`-32000`, "session closed: …"), so no client waits
 * for an answer that cannot come; then the transport is closed, which aborts the running calls.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, type RequestId } from "@modelcontextprotocol/sdk/types.js";

export interface McpSession {
  id: string;
  keyId: string;
  accountId: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
  /** Ids of the requests whose POST is still open, waiting for their answer. */
  inFlight: Set<RequestId>;
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
  const close = (session: McpSession, reason: string) => {
    sessions.delete(session.id);
    return closeSession(session, reason);
  };
  const sweep = setInterval(
    () => {
      const oldest = now() - options.idleMs;
      for (const session of [...sessions.values()])
        if (session.lastUsed < oldest && session.inFlight.size === 0)
          void close(session, "idle too long");
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
      const trim = (same: (entry: McpSession) => boolean, limit: number, holder: string) => {
        const matching = [...sessions.values()]
          .filter(same)
          .sort((a, b) => a.lastUsed - b.lastUsed);
        for (const extra of matching.slice(0, Math.max(0, matching.length - limit)))
          void close(
            extra,
            `its ${holder} opened more than ${limit} sessions (least recently used)`,
          );
      };
      trim((entry) => entry.keyId === session.keyId, options.maxPerKey, "key");
      trim((entry) => entry.accountId === session.accountId, options.maxPerAccount, "account");
    },
    remove(id) {
      sessions.delete(id);
    },
    size: () => sessions.size,
    async closeAll() {
      clearInterval(sweep);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        all.map((session) => closeSession(session, "the gateway is shutting down")),
      );
    },
  };
}

/**
 * Answers each request still in flight with an error for its id (the SDK transport writes it on
 * that request's stream and ends the stream), then closes the transport: the running calls are
 * aborted (charged nothing, their concurrency slots freed) and send nothing more.
 */
async function closeSession(session: McpSession, reason: string): Promise<void> {
  const pending = [...session.inFlight];
  session.inFlight.clear();
  if (pending.length > 0)
    await Promise.all(
      pending.map((id) =>
        session.transport
          .send({
            jsonrpc: "2.0",
            id,
            error: { code: ErrorCode.ConnectionClosed, message: `session closed: ${reason}.` },
          })
          // Already answered meanwhile, or its stream is gone: nothing left to tell.
          .catch(() => undefined),
      ),
    );
  await session.transport.close().catch(() => undefined);
}
