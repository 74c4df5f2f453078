/**
 * @module console/main
 * The console's shell: who is signed in, the navigation, the theme switch and the page for the
 * current path. Signed out, only the log-in and register pages are reachable.
 */
import "./styles.css";
import type { ComponentType } from "preact";
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { logOut, refreshAccount } from "./account.ts";
import { AdminAccountsPage } from "./admin/accounts.tsx";
import { AdminAuditPage } from "./admin/audit.tsx";
import { AdminCodesPage } from "./admin/codes.tsx";
import { AdminErrorsPage } from "./admin/errors.tsx";
import { AdminKeysPage } from "./admin/keys.tsx";
import { AdminRoutesPage } from "./admin/routes.tsx";
import { AdminUsagePage } from "./admin/usage.tsx";
import { setUnauthorizedHandler } from "./api.ts";
import { LoginPage, RegisterPage } from "./pages/auth.tsx";
import { BalancePage } from "./pages/balance.tsx";
import { KeysPage } from "./pages/keys.tsx";
import { ModelsPage } from "./pages/models.tsx";
import { PlaygroundPage } from "./pages/playground.tsx";
import { UsagePage } from "./pages/usage.tsx";
import { VideosPage } from "./pages/videos.tsx";
import { WebhookPage } from "./pages/webhook.tsx";
import { followLink, navigate, usePath } from "./router.ts";
import { applyTheme, readTheme, session, type Theme, useStore } from "./state.ts";
import type { Account } from "./types.ts";
import { Money } from "./ui.tsx";

interface Route {
  path: string;
  label: string;
  page: ComponentType;
}

const USER_ROUTES: Route[] = [
  { path: "/", label: "Balance", page: BalancePage },
  { path: "/keys", label: "API keys", page: KeysPage },
  { path: "/usage", label: "Usage", page: UsagePage },
  { path: "/models", label: "Models", page: ModelsPage },
  { path: "/playground", label: "Playground", page: PlaygroundPage },
  { path: "/videos", label: "Videos", page: VideosPage },
  { path: "/webhook", label: "Webhook secret", page: WebhookPage },
];

const ADMIN_ROUTES: Route[] = [
  { path: "/admin/accounts", label: "Accounts", page: AdminAccountsPage },
  { path: "/admin/keys", label: "Keys", page: AdminKeysPage },
  { path: "/admin/credit-codes", label: "Credit codes", page: AdminCodesPage },
  { path: "/admin/routes", label: "Routes", page: AdminRoutesPage },
  { path: "/admin/errors", label: "Recent errors", page: AdminErrorsPage },
  { path: "/admin/audit", label: "Audit trail", page: AdminAuditPage },
  { path: "/admin/usage", label: "Usage (all)", page: AdminUsagePage },
];

function ThemeSwitch() {
  const [theme, setTheme] = useState<Theme>(readTheme());
  const next: Record<Theme, Theme> = { system: "light", light: "dark", dark: "system" };
  return (
    <button
      type="button"
      class="ghost"
      aria-label={`Theme: ${theme}. Switch to ${next[theme]}`}
      onClick={() => {
        const chosen = next[theme];
        applyTheme(chosen);
        setTheme(chosen);
      }}
    >
      {theme === "system" ? "◐ Auto" : theme === "light" ? "☀ Light" : "☾ Dark"}
    </button>
  );
}

function NavLinks(props: { routes: Route[]; path: string; label: string }) {
  return (
    <nav aria-label={props.label}>
      <ul>
        {props.routes.map((route) => (
          <li key={route.path}>
            <a
              href={`/console${route.path === "/" ? "/" : route.path}`}
              aria-current={props.path === route.path ? "page" : undefined}
              onClick={followLink}
            >
              {route.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Shell(props: { account: Account; path: string }) {
  const routes = props.account.role === "admin" ? [...USER_ROUTES, ...ADMIN_ROUTES] : USER_ROUTES;
  const route = routes.find((candidate) => candidate.path === props.path);
  const Current = route?.page;
  return (
    <div class="shell">
      <aside class="sidebar">
        <NavLinks routes={USER_ROUTES} path={props.path} label="Account" />
        {props.account.role === "admin" ? (
          <>
            <h2 class="nav-title">Admin</h2>
            <NavLinks routes={ADMIN_ROUTES} path={props.path} label="Admin" />
          </>
        ) : null}
      </aside>
      <main id="main" class="main">
        {Current ? (
          <Current key={props.path} />
        ) : (
          <section class="page">
            <h1>Not found</h1>
            <p>
              No page at this address.{" "}
              <a href="/console/" onClick={followLink}>
                Back to the balance
              </a>
              .
            </p>
          </section>
        )}
      </main>
    </div>
  );
}

function App() {
  const account = useStore(session);
  const path = usePath();
  useEffect(() => {
    setUnauthorizedHandler(() => session.set(null));
    refreshAccount().catch(() => session.set(null));
  }, []);
  const publicPage = path === "/login" || path === "/register";
  // Whether the session was known before this change: a redirect on the first load (`undefined`
  // before) leaves the focus alone, one after logging in or out (or a session that expired)
  // moves it to the new page's heading.
  const known = useRef<Account | null | undefined>(undefined);
  useEffect(() => {
    const settled = known.current !== undefined;
    known.current = account;
    if (account === null && !publicPage) navigate("/login", true, settled);
    if (account && publicPage) navigate("/", true, settled);
  }, [account, publicPage]);

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="/console/" onClick={followLink}>
          Switchyard
        </a>
        <div class="topbar-right">
          {account ? (
            <>
              <span class="who" title={account.email}>
                {account.email}
                {account.role === "admin" ? " (admin)" : ""} ·{" "}
                <Money micros={account.balance_micros} />
              </span>
              <button type="button" class="ghost" onClick={() => void logOut()}>
                Log out
              </button>
            </>
          ) : null}
          <ThemeSwitch />
        </div>
      </header>
      {account === undefined ? (
        <main id="main" class="main loading" aria-busy="true">
          <p>Loading…</p>
        </main>
      ) : account === null || publicPage ? (
        <main id="main" class="main narrow">
          {path === "/register" ? <RegisterPage /> : <LoginPage />}
        </main>
      ) : (
        <Shell account={account} path={path} />
      )}
    </>
  );
}

applyTheme(readTheme());
render(<App />, document.getElementById("app")!);
