/**
 * An operator's credit in the console whose answer is lost on the way back (the entry was
 * written, the browser saw a network error) and who presses the button again: the ledger gets
 * one entry, not two (the form sends one `Idempotency-Key` per intended entry; docs/accounts.md,
 * "Retries"). A changed amount is a new entry.
 */
import type { Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

describe.skipIf(chromiumMissing !== undefined)("console: a credit sent again", () => {
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

  it("credits once when the first answer was lost and the operator retries", {
    timeout: 120_000,
  }, async () => {
    const admin = await accountWithPassword(gateway, "admin");
    const user = await accountWithPassword(gateway, "user", { balanceMicros: 0 });
    const page = await browser.newPage();
    await logIn(page, gateway, admin.email);

    // The first credit reaches the gateway, but its answer never reaches the browser.
    let lost = 0;
    await page.route("**/v1/admin/accounts/*/credit", async (route: Route) => {
      if (lost === 0) {
        lost++;
        await route.fetch();
        await route.abort("connectionreset");
        return;
      }
      await route.continue();
    });

    await page.getByRole("link", { name: "Accounts", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Accounts" }).waitFor();
    await page.getByLabel("Email", { exact: true }).fill(user.email);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("button", { name: `Credit or debit ${user.email}` }).click();
    await page.getByLabel("Amount (USD)", { exact: true }).fill("2.5");
    await page.getByLabel("Reason", { exact: true }).fill("invoice 77");
    await page.getByRole("button", { name: "Credit account" }).click();
    await page.getByRole("alert").first().waitFor();
    expect(lost).toBe(1);
    // It was written: the ledger has it, though the browser does not know.
    const balance = async () =>
      (await gateway.services.store.findAccountById(user.id))?.balanceMicros;
    expect(await balance()).toBe(2_500_000);

    await page.getByRole("button", { name: "Credit account" }).click();
    await page.getByText("Credited 2.50 USD").waitFor();
    expect(await balance()).toBe(2_500_000);
    const credits = (await gateway.services.store.listEntries(user.id, { limit: 10 })).filter(
      (entry) => entry.kind === "credit",
    );
    expect(credits).toHaveLength(1);

    // A new entry after a success is a new intent, even with the same values.
    await page.getByLabel("Amount (USD)", { exact: true }).fill("2.5");
    await page.getByLabel("Reason", { exact: true }).fill("invoice 77");
    await page.getByRole("button", { name: "Credit account" }).click();
    await expect.poll(balance).toBe(5_000_000);
  });
});
