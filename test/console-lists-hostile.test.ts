/**
 * Lists in the console that a cursor-paged API serves must reach their end: every key of an
 * account (a key created as the 101st must show, to be seen and revoked), every credit code
 * (newest first, the older ones through "Load more").
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

async function open(page: Page, label: string, title: string) {
  await page.getByRole("link", { name: label, exact: true }).click();
  await page.getByRole("heading", { level: 1, name: title }).waitFor();
}

/**
 * True once `row` shows, following any "Load more" the page offers. Each step waits for what the
 * list shows (the row, or the button), not for the network: a page's load state is reached once
 * and stays reached, so it says nothing of the list's own requests under a slow machine.
 */
async function reachable(page: Page, row: ReturnType<Page["getByRole"]>): Promise<boolean> {
  const more = page.getByRole("button", { name: "Load more" });
  const rows = page.getByRole("row");
  for (let round = 0; round < 10; round++) {
    await row
      .or(more)
      .first()
      .waitFor({ timeout: 15_000 })
      .catch(() => {});
    if ((await row.count()) > 0) return true;
    if ((await more.count()) === 0) return false;
    const shown = await rows.count();
    await more.click();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBeGreaterThan(shown);
  }
  return (await row.count()) > 0;
}

describe.skipIf(chromiumMissing !== undefined)("console: lists read to their end", () => {
  let gateway: TestGateway;
  let browser: TestBrowser;
  beforeAll(async () => {
    gateway = await startTestGateway();
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it("lists a key created in the console when the account already has 100 keys", {
    timeout: 120_000,
  }, async () => {
    const user = await accountWithPassword(gateway, "user");
    for (let i = 0; i < 100; i++) {
      const made = await gateway.request(`/v1/admin/accounts/${user.id}/keys`, {
        key: gateway.adminKey,
        json: { name: `old-${i}` },
      });
      expect(made.status).toBe(201);
    }
    const page = await browser.newPage();
    await logIn(page, gateway, user.email);
    await open(page, "API keys", "API keys");
    await page.getByLabel("Name", { exact: true }).fill("newest-key");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText('New key "newest-key".').waitFor();
    // The key just made must be in "Your keys" (to see it, and to revoke it), directly or
    // through "Load more". GET /v1/account/keys pages oldest first, 100 by default: a page that
    // reads only the first one never shows the 101st key.
    const row = page.getByRole("row", { name: /newest-key/ });
    expect(await reachable(page, row)).toBe(true);
    await page.close();
  });

  it("reaches the oldest credit code when there are more than a page of them", {
    timeout: 120_000,
  }, async () => {
    const admin = await accountWithPassword(gateway, "admin");
    const batch = async (count: number, note: string) => {
      const made = await gateway.request("/v1/admin/credit-codes", {
        key: gateway.adminKey,
        json: { amount_micros: 1_000_000, count, note },
      });
      expect(made.status).toBe(201);
    };
    // The oldest first, then a full page of newer ones: the list shows the newest first, 100 a
    // page, so the oldest is on the second page.
    await batch(1, "the-oldest-code");
    await batch(100, "newer");
    await browser.context.clearCookies();
    const page = await browser.newPage();
    await logIn(page, gateway, admin.email);
    await open(page, "Credit codes", "Credit codes");
    // A batch takes at most 100 codes, as the API: the field does not offer more.
    expect(await page.getByLabel("How many", { exact: true }).getAttribute("max")).toBe("100");
    const row = page.getByRole("row", { name: /the-oldest-code/ });
    expect(await reachable(page, row)).toBe(true);
    await page.close();
  });
});
