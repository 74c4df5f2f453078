/**
 * @module console/router
 * Paths under `/console/` with the History API; the gateway answers `index.html` for each of
 * them, so a reload or a shared link opens the same page.
 */
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

/** The page path without the base: `/console/keys` → `/keys`. */
export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return path === "" ? "/" : path.replace(/\/+$/, "") || "/";
}

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  const url = BASE + (path === "/" ? "/" : path);
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return path;
}

/** For `onClick` of links: follow in-app links without a reload, leave modified clicks alone. */
export function followLink(event: MouseEvent): void {
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!anchor || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const href = anchor.getAttribute("href");
  if (!href?.startsWith(BASE)) return;
  event.preventDefault();
  navigate(href.slice(BASE.length) || "/");
}
