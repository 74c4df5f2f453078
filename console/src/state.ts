/**
 * @module console/state
 * What the console remembers, all in memory: the signed-in account, and the keys created in
 * this page's lifetime (their secrets are shown once and kept only here, for the playground;
 * never in localStorage, gone on reload). The theme choice is the one thing stored.
 */
import { useEffect, useState } from "preact/hooks";
import type { Account } from "./types.ts";

type Listener = () => void;

function store<T>(initial: T) {
  let value = initial;
  const listeners = new Set<Listener>();
  return {
    get: () => value,
    set(next: T) {
      value = next;
      for (const listener of listeners) listener();
    },
    subscribe(listener: Listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type Store<T> = ReturnType<typeof store<T>>;

export function useStore<T>(source: Store<T>): T {
  const [, redraw] = useState(0);
  useEffect(() => {
    const unsubscribe = source.subscribe(() => redraw((n) => n + 1));
    return () => {
      unsubscribe();
    };
  }, [source]);
  return source.get();
}

/** `undefined` while the first `GET /v1/account` is out; `null` when signed out. */
export const session = store<Account | null | undefined>(undefined);

export interface SessionKey {
  id: string;
  name: string;
  prefix: string;
  secret: string;
}

export const sessionKeys = store<SessionKey[]>([]);

/**
 * The keys belong to the account signed in when they were made: a session that ends (log-out,
 * expiry, a 401 from any call) or another account signing in forgets them, so the next person
 * at the same page can never call with them.
 */
let keysOwner: string | undefined;
session.subscribe(() => {
  const account = session.get();
  if (account === undefined) return; // still asking who is signed in
  const owner = account?.id;
  if (owner === keysOwner) return;
  keysOwner = owner;
  if (sessionKeys.get().length > 0) sessionKeys.set([]);
});

export function rememberKey(key: SessionKey): void {
  sessionKeys.set([...sessionKeys.get().filter((known) => known.id !== key.id), key]);
}

export function forgetKey(id: string): void {
  sessionKeys.set(sessionKeys.get().filter((known) => known.id !== id));
}

export type Theme = "system" | "light" | "dark";
const THEME_STORAGE = "switchyard-theme";

export function readTheme(): Theme {
  try {
    const saved = localStorage.getItem(THEME_STORAGE);
    return saved === "light" || saved === "dark" ? saved : "system";
  } catch {
    return "system";
  }
}

export function applyTheme(theme: Theme): void {
  if (theme === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", theme);
  try {
    if (theme === "system") localStorage.removeItem(THEME_STORAGE);
    else localStorage.setItem(THEME_STORAGE, theme);
  } catch {
    // storage refused: the choice lasts for this page
  }
}
