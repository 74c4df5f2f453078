import { describe, expect, it, vi } from "vitest";
import { createSessionStore, type McpSession } from "./sessions.ts";

function session(id: string, keyId: string, lastUsed: number, accountId = `acct-${keyId}`) {
  const events: string[] = [];
  const close = vi.fn(async () => {
    events.push("close");
  });
  const send = vi.fn(async (message: { id: unknown }) => {
    events.push(`send ${String(message.id)}`);
  });
  return {
    events,
    send,
    session: {
      id,
      keyId,
      accountId,
      lastUsed,
      transport: { close, send },
      server: {},
      inFlight: new Set(),
    } as unknown as McpSession,
    close,
  };
}

describe("MCP session store", () => {
  it("closes a key's least recently used sessions above its limit, not other keys'", async () => {
    let now = 1000;
    const store = createSessionStore({
      idleMs: 60_000,
      maxPerKey: 2,
      maxPerAccount: 100,
      now: () => now,
    });
    const a = session("a", "k1", 1);
    const b = session("b", "k1", 2);
    const other = session("x", "k2", 0);
    store.add(a.session);
    store.add(b.session);
    store.add(other.session);
    now = 2000;
    store.get("a"); // a is used again: b becomes the least recently used
    const c = session("c", "k1", 3000);
    store.add(c.session);
    expect(b.close).toHaveBeenCalledOnce();
    expect(a.close).not.toHaveBeenCalled();
    expect(other.close).not.toHaveBeenCalled();
    expect(store.get("b")).toBeUndefined();
    expect(store.size()).toBe(3);
    await store.closeAll();
    expect(a.close).toHaveBeenCalledOnce();
    expect(c.close).toHaveBeenCalledOnce();
    expect(store.size()).toBe(0);
  });

  it("bounds an account's sessions across its keys (each key under its own limit)", async () => {
    const store = createSessionStore({ idleMs: 60_000, maxPerKey: 2, maxPerAccount: 3 });
    const opened = ["k1", "k2", "k3", "k4"].map((keyId, index) =>
      session(`s${index}`, keyId, index, "acct-1"),
    );
    const elsewhere = session("x", "k9", 0, "acct-2");
    store.add(elsewhere.session);
    for (const { session: each } of opened) store.add(each);
    // Four keys of one account, one session each: the account's oldest goes.
    expect(opened[0]!.close).toHaveBeenCalledOnce();
    for (const later of opened.slice(1)) expect(later.close).not.toHaveBeenCalled();
    expect(elsewhere.close).not.toHaveBeenCalled();
    expect(store.size()).toBe(4);
    await store.closeAll();
  });

  it("sweeps sessions idle longer than the limit", async () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      const store = createSessionStore({
        idleMs: 10_000,
        maxPerKey: 10,
        maxPerAccount: 100,
        now: () => now,
      });
      const idle = session("idle", "k", 0);
      const busy = session("busy", "k", 0);
      store.add(idle.session);
      store.add(busy.session);
      now = 9_000;
      store.get("busy");
      now = 12_000;
      vi.advanceTimersByTime(10_000);
      expect(idle.close).toHaveBeenCalledOnce();
      expect(busy.close).not.toHaveBeenCalled();
      expect(store.get("idle")).toBeUndefined();
      await store.closeAll();
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers the requests in flight with an error for their ids before closing", async () => {
    const store = createSessionStore({ idleMs: 60_000, maxPerKey: 1, maxPerAccount: 100 });
    const old = session("old", "k", 1);
    old.session.inFlight.add(7);
    old.session.inFlight.add("x");
    store.add(old.session);
    store.add(session("new", "k", 2).session);
    await vi.waitFor(() => expect(old.close).toHaveBeenCalledOnce());
    expect(old.events).toEqual(["send 7", "send x", "close"]);
    expect(old.send.mock.calls[0]?.[0]).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32000, message: expect.stringMatching(/^session closed: its key opened/) },
    });
    expect(old.session.inFlight.size).toBe(0);
    await store.closeAll();
  });

  it("does not sweep a session with a request in flight as idle", async () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      const store = createSessionStore({
        idleMs: 10_000,
        maxPerKey: 10,
        maxPerAccount: 100,
        now: () => now,
      });
      const working = session("working", "k", 0);
      working.session.inFlight.add(1);
      store.add(working.session);
      now = 12_000;
      vi.advanceTimersByTime(10_000);
      expect(working.close).not.toHaveBeenCalled();
      working.session.inFlight.delete(1);
      now = 24_000;
      vi.advanceTimersByTime(10_000);
      expect(working.close).toHaveBeenCalledOnce();
      await store.closeAll();
    } finally {
      vi.useRealTimers();
    }
  });
});
