/**
 * @module test/support/browser
 * Headless Chromium for the console's browser tests: Debian's `/usr/bin/chromium` (or
 * `SWITCHYARD_CHROMIUM`) driven by `playwright-core`, with a fresh profile per launch and
 * nothing reaching out to the network on its own. `chromiumMissing` says why tests skip when it
 * is not installed (`.ci/run` installs it).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.SWITCHYARD_CHROMIUM ?? "/usr/bin/chromium";

/** Why browser tests cannot run here, or `undefined` when they can. */
export const chromiumMissing: string | undefined = existsSync(CHROMIUM_PATH)
  ? undefined
  : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set SWITCHYARD_CHROMIUM): browser tests skipped`;

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(
  options: { viewport?: { width: number; height: number }; colorScheme?: "light" | "dark" } = {},
): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "switchyard-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport: options.viewport ?? { width: 1280, height: 860 },
    colorScheme: options.colorScheme ?? "light",
    permissions: ["clipboard-read", "clipboard-write"],
  });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      // confirm() dialogs (revoke, rotate) are accepted, as a person clicking OK would.
      page.on("dialog", (dialog) => void dialog.accept());
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
