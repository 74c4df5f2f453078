/**
 * Where the keyboard focus goes, for a keyboard or screen-reader user. Opening a page in the app
 * (a link, logging in or out) moves the focus to the new page's heading; an action whose button
 * goes away (revoking a key) moves it to the notice that says what happened. The focus never
 * falls to the document body, where the next Tab starts over from the top.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

async function makeKey(gateway: TestGateway, accountId: string, name: string) {
  const made = await gateway.request(`/v1/admin/accounts/${accountId}/keys`, {
    key: gateway.adminKey,
    json: { name },
  });
  expect(made.status).toBe(201);
}

/** The focused element: its tag, its id and its text. */
async function focused(page: Page): Promise<{ tag: string; id: string; text: string }> {
  return page.evaluate(() => {
    const element = document.activeElement;
    return {
      tag: element?.tagName ?? "",
      id: element?.id ?? "",
      text: (element?.textContent ?? "").trim(),
    };
  });
}

/** Waits until the focus is on the element `match` describes (or the time runs out). */
async function focusSettles(
  page: Page,
  match: (now: { tag: string; id: string; text: string }) => boolean,
): Promise<{ tag: string; id: string; text: string }> {
  let now = await focused(page);
  for (let round = 0; round < 40 && !match(now); round++) {
    await page.waitForTimeout(50);
    now = await focused(page);
  }
  return now;
}

const onHeading = (title: string) => (now: { tag: string; id: string; text: string }) =>
  now.id === "page-title" && now.text === title;

describe.skipIf(chromiumMissing !== undefined)("console: where the focus goes", () => {
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

  it("moves the focus to the new page's heading after a link, logging in and logging out, not on a first load", {
    timeout: 60_000,
  }, async () => {
    const user = await accountWithPassword(gateway, "user");
    await browser.context.clearCookies();
    const page = await browser.newPage();
    await logIn(page, gateway, user.email);
    expect(await focusSettles(page, onHeading("Balance"))).toMatchObject({
      id: "page-title",
      text: "Balance",
    });

    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    expect(await focusSettles(page, onHeading("API keys"))).toMatchObject({
      id: "page-title",
      text: "API keys",
    });

    // Back: the previous page, and the focus on its heading.
    await page.goBack();
    await page.getByRole("heading", { level: 1, name: "Balance" }).waitFor();
    expect(await focusSettles(page, onHeading("Balance"))).toMatchObject({
      id: "page-title",
      text: "Balance",
    });

    // A first load (a reload, a shared link) starts at the top of the document, as any page.
    await page.goto(`${gateway.url}/console/usage`);
    await page.getByRole("heading", { level: 1, name: "Usage" }).waitFor();
    await page.waitForTimeout(300);
    expect((await focused(page)).tag).toBe("BODY");

    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("heading", { level: 1, name: "Log in" }).waitFor();
    expect(await focusSettles(page, onHeading("Log in"))).toMatchObject({
      id: "page-title",
      text: "Log in",
    });
    await page.close();
  });

  it("moves the focus to the notice after revoking a key, on the account's and the operators' key pages", {
    timeout: 60_000,
  }, async () => {
    const user = await accountWithPassword(gateway, "user");
    await makeKey(gateway, user.id, "doomed");
    await browser.context.clearCookies();
    const page = await browser.newPage();
    await logIn(page, gateway, user.email);
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await page.getByRole("button", { name: /^Revoke key doomed/ }).focus();
    await page.keyboard.press("Enter");
    await page.getByText(/^Revoked doomed/).waitFor();
    // The revoke button was disabled, then removed: the focus must not fall to the body.
    const mine = await focusSettles(page, (now) => now.text.startsWith("Revoked doomed"));
    expect(mine).toMatchObject({ tag: "P" });
    expect(mine.text).toMatch(/^Revoked doomed/);
    await page.close();

    const admin = await accountWithPassword(gateway, "admin");
    const victim = await accountWithPassword(gateway, "user");
    await makeKey(gateway, victim.id, "theirs");
    await browser.context.clearCookies();
    const adminPage = await browser.newPage();
    await logIn(adminPage, gateway, admin.email);
    await adminPage.getByRole("link", { name: "Keys", exact: true }).click();
    await adminPage.getByRole("heading", { level: 1, name: "Keys" }).waitFor();
    await adminPage.getByLabel("Account email", { exact: true }).fill(victim.email);
    await adminPage.getByRole("button", { name: "Find" }).click();
    await adminPage.getByRole("button", { name: victim.email }).click();
    await adminPage.getByRole("button", { name: /^Revoke key theirs/ }).focus();
    await adminPage.keyboard.press("Enter");
    await adminPage.getByText(/^Revoked theirs/).waitFor();
    const theirs = await focusSettles(adminPage, (now) => now.text.startsWith("Revoked theirs"));
    expect(theirs).toMatchObject({ tag: "P" });
    expect(theirs.text).toMatch(/^Revoked theirs/);
    await adminPage.close();
  });
});
