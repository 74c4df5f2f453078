/**
 * Suspending an account from the console's admin accounts page, in a real browser: the reason
 * is asked for, the row shows the account as suspended, its key is refused; "Unsuspend" (after
 * a confirmation) lifts it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn, newApiKey } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

describe.skipIf(chromiumMissing !== undefined)("console: suspending an account", () => {
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

  it("suspends with a reason and unsuspends", { timeout: 120_000 }, async () => {
    const admin = await accountWithPassword(gateway, "admin");
    const user = await accountWithPassword(gateway, "user");
    const key = await newApiKey(gateway, user.id);
    const balance = () => gateway.request("/v1/account/balance", { key }).then((r) => r.status);
    expect(await balance()).toBe(200);

    const page = await browser.newPage();
    await logIn(page, gateway, admin.email);
    await page.getByRole("link", { name: "Accounts", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Accounts" }).waitFor();
    await page.getByLabel("Email", { exact: true }).fill(user.email);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("button", { name: `Suspend ${user.email}` }).click();
    const submit = page.getByRole("button", { name: "Suspend account" });
    expect(await submit.isDisabled()).toBe(true);
    await page.getByLabel("Reason", { exact: true }).fill("chargeback 88");
    await submit.click();
    await page.getByText(`Suspended ${user.email}`).waitFor();
    await page.getByRole("row").filter({ hasText: user.email }).getByText("suspended").waitFor();
    expect(await balance()).toBe(403);
    const stored = await gateway.services.store.findAccountById(user.id);
    expect(stored?.suspendedReason).toBe("chargeback 88");

    await page.getByRole("button", { name: `Unsuspend ${user.email}` }).click();
    await page.getByText(`Unsuspended ${user.email}.`).waitFor();
    await page.getByRole("button", { name: `Suspend ${user.email}` }).waitFor();
    expect(await balance()).toBe(200);
  });
});
