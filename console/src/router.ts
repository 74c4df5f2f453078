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

/**
 * Focus the new page's heading (`#page-title`, from `Page`) once it is drawn, so a keyboard or
 * screen-reader user lands at the top of the page just opened rather than on a link that is gone
 * or on the document body. Preact draws on a microtask; a timer runs after it.
 */
function focusPageTitle(): void {
  setTimeout(() => {
    const title = document.getElementById("page-title");
    if (title && document.activeElement !== title) title.focus({ preventScroll: true });
  }, 0);
}

/**
 * Opens `path` in the app. `focus` (the default) moves the focus to the new page's heading: an
 * in-app link, logging in or out. Redirects on the first load pass `false`: a page that is opened
 * fresh starts at the top of the document, as any page does.
 */
export function navigate(path: string, replace = false, focus = true): void {
  const url = BASE + (path === "/" ? "/" : path);
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
  if (focus) focusPageTitle();
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    // Back and forward: the page changes as with a link, and so does the focus.
    const travel = () => {
      update();
      focusPageTitle();
    };
    listeners.add(update);
    window.addEventListener("popstate", travel);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", travel);
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
