/**
 * The usage page's dates and times, for a user far from UTC. The per-day charts are UTC days (the
 * API's `group_by=day`), so the whole view keeps to UTC: the From/To fields are UTC days (so
 * labelled, sent as UTC midnights, "today" being today in UTC) and each request's time is shown
 * in UTC, so a request always shows under the day the range and the charts count it in.
 */
import type { Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn, newApiKey } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

describe.skipIf(chromiumMissing !== undefined)("console: usage dates in one time zone", () => {
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

  // UTC+14 and UTC−11: for most of any day, one of them is on another date than UTC.
  for (const timezoneId of ["Pacific/Kiritimati", "Pacific/Pago_Pago"]) {
    it(`keeps the range, the request times and the charts in UTC days (browser in ${timezoneId})`, {
      timeout: 60_000,
    }, async () => {
      const { email, id } = await accountWithPassword(gateway, "user", {
        balanceMicros: 50_000_000,
      });
      const apiKey = await newApiKey(gateway, id);
      const chat = await gateway.request("/v1/chat/completions", {
        key: apiKey,
        json: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      });
      expect(chat.status).toBe(200);
      await chat.arrayBuffer();

      await browser.context.clearCookies();
      const page = await browser.newPage();
      const cdp = await browser.context.newCDPSession(page);
      await cdp.send("Emulation.setTimezoneOverride", { timezoneId });
      await logIn(page, gateway, email);

      const asked: URL[] = [];
      const seen = (request: Request) => {
        const url = new URL(request.url());
        if (url.pathname === "/v1/account/usage") asked.push(url);
      };
      page.on("request", seen);
      const before = Date.now();
      await page.getByRole("link", { name: "Usage", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Usage" }).waitFor();
      const time = page.getByTestId("usage-table").locator("tbody time").first();
      await time.waitFor();
      const after = Date.now();

      // The fields say they are UTC days; "To" starts as today in UTC.
      const from = await page.getByLabel("From (UTC)", { exact: true }).inputValue();
      const to = await page.getByLabel("To (UTC)", { exact: true }).inputValue();
      expect([utcDay(before), utcDay(after)]).toContain(to);

      // They are sent as UTC midnights; `to` is exclusive, the next UTC midnight.
      const records = asked.find((url) => !url.searchParams.has("group_by"));
      expect(records?.searchParams.get("from")).toBe(`${from}T00:00:00Z`);
      const nextMidnight = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString();
      expect(records?.searchParams.get("to")).toBe(nextMidnight);

      // The request's time is shown in UTC, under the UTC day the range and charts count it in.
      const at = (await time.getAttribute("datetime")) ?? "";
      const shown = (await time.textContent()) ?? "";
      expect(shown).toBe(`${at.slice(0, 10)} ${at.slice(11, 19)} UTC`);
      expect(await page.getByRole("columnheader", { name: "When (UTC)" }).count()).toBe(1);
      page.off("request", seen);
      await cdp.detach();
      await page.close();
    });
  }
});
