/**
 * Attacks on the console from a hostile page and hostile values: a page on another origin of the
 * same host (same site, so SameSite=Strict does not keep the cookie back) cannot act with a
 * signed-in user's cookie; values other users control render as text; the console cannot be
 * framed.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn, newApiKey } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const PAYLOAD = `<img src=x id=xss onerror="document.title='pwned'">`;

describe.skipIf(chromiumMissing !== undefined)(
  "the console against a hostile page and hostile values",
  () => {
    let gateway: TestGateway;
    let browser: TestBrowser;
    let evil: Server;
    let evilUrl: string;
    beforeAll(async () => {
      gateway = await startTestGateway();
      browser = await launchBrowser();
      const target = gateway.url;
      evil = createServer((_request, response) => {
        response.setHeader("content-type", "text/html");
        response.end(`<!doctype html><body>
<form id=f method=POST action="${target}/v1/account/keys" enctype="text/plain" target=sink>
<input name='{"name":"csrf","x":"' value='"}'></form>
<iframe name=sink></iframe>
<iframe id=frame src="${target}/console/"></iframe>
<script>
window.results = {};
(async () => {
  try {
    const r = await fetch("${target}/v1/account/keys", { method: "POST", credentials: "include",
      headers: { "x-switchyard-console": "1", "content-type": "application/json" },
      body: JSON.stringify({ name: "csrf-fetch" }) });
    window.results.fetch = "status " + r.status;
  } catch (e) { window.results.fetch = "blocked"; }
  try {
    const r = await fetch("${target}/v1/account/keys", { method: "POST", credentials: "include",
      mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ name: "csrf-nocors" }) });
    window.results.nocors = r.type;
  } catch (e) { window.results.nocors = "blocked"; }
  try {
    const r = await fetch("${target}/v1/account/logout", { method: "POST", credentials: "include", mode: "no-cors" });
    window.results.logout = r.type;
  } catch (e) { window.results.logout = "blocked"; }
  document.getElementById("f").submit();
  window.results.done = true;
})();
</script></body>`);
      });
      await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
      evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await gateway?.close();
      await new Promise((resolve) => evil?.close(resolve));
    });

    it("a page on another origin cannot create keys or log the user out with the cookie", {
      timeout: 120_000,
    }, async () => {
      const user = await accountWithPassword(gateway);
      const page = await browser.newPage();
      await logIn(page, gateway, user.email);
      const attacker = await browser.newPage();
      await attacker.goto(evilUrl);
      await attacker.waitForFunction(
        () => (window as { results?: { done?: boolean } }).results?.done,
      );
      await attacker.waitForTimeout(1000);
      const results = await attacker.evaluate(() => (window as { results?: unknown }).results);
      expect(results).toMatchObject({ fetch: "blocked" });
      // The framed console is refused (X-Frame-Options / frame-ancestors): no document inside.
      const framed = attacker.frames().find((frame) => frame.url().includes("/console"));
      expect(
        await framed?.evaluate(() => document.querySelector("#app") !== null).catch(() => false),
      ).toBeFalsy();
      await attacker.close();
      // Still signed in, and no key was made.
      await page.getByRole("link", { name: "API keys", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
      await page.getByText("No keys yet.").or(page.locator("tr[data-key-id]").first()).waitFor();
      expect(await page.locator("tr[data-key-id]").count()).toBe(0);
      await page.close();
    });

    it("renders key names, request `user` values and audit reasons as text", {
      timeout: 120_000,
    }, async () => {
      const user = await accountWithPassword(gateway);
      const admin = await accountWithPassword(gateway, "admin");
      const key = await newApiKey(gateway, user.id);
      const named = await gateway.request("/v1/account/keys", { key, json: { name: PAYLOAD } });
      expect(named.status).toBe(201);
      const chat = await gateway.request("/v1/chat/completions", {
        key,
        json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], user: PAYLOAD },
      });
      await chat.arrayBuffer();
      const credit = await gateway.request(`/v1/admin/accounts/${user.id}/credit`, {
        key: gateway.adminKey,
        json: { amount_micros: 1, reason: PAYLOAD },
      });
      expect(credit.status).toBeLessThan(300);
      await browser.context.clearCookies();
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await logIn(page, gateway, user.email);
      await page.getByRole("link", { name: "API keys", exact: true }).click();
      await page.getByRole("cell", { name: PAYLOAD }).first().waitFor();
      await page.getByRole("link", { name: "Balance", exact: true }).click();
      await page.getByText(PAYLOAD).first().waitFor();
      expect(await page.locator("#xss").count()).toBe(0);
      await page.getByRole("button", { name: "Log out" }).click();
      await page.getByRole("heading", { level: 1, name: "Log in" }).waitFor();
      await logIn(page, gateway, admin.email);
      for (const [link, title] of [
        ["Audit trail", "Audit trail"],
        ["Usage (all)", "Usage"],
      ] as const) {
        await page.getByRole("link", { name: link, exact: true }).click();
        await page.getByRole("heading", { level: 1, name: title }).waitFor();
        await page.waitForLoadState("networkidle");
        expect(await page.locator("#xss").count()).toBe(0);
      }
      expect(await page.title()).not.toBe("pwned");
      expect(errors).toEqual([]);
      await page.close();
    });
  },
);
