/**
 * The playground keeps what the user picked. A browser that is slow to run the page's effects
 * (a busy machine, a throttled background tab) let the page's "pick a default" step run after
 * the user's own choice and overwrite it: the call then went out with another key or another
 * model than the ones on the screen (and a key limited to one model was refused). Here the
 * effects are held back on purpose, so the user's choice always comes first.
 */
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { accountWithPassword, logIn } from "./support/console-accounts.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

/** Preact runs effects after the next frame, or after 35 ms without one: make that 1.5 s. */
const SLOW_EFFECTS = `
  window.requestAnimationFrame = () => 0;
  const setTimeoutBefore = window.setTimeout.bind(window);
  window.setTimeout = (callback, delay, ...rest) =>
    setTimeoutBefore(callback, delay === 35 ? 1500 : delay, ...rest);
`;

async function createKey(page: Page, name: string): Promise<string> {
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  await page.getByText(`New key "${name}".`).waitFor();
  return (await page.getByTestId("secret").textContent())!;
}

describe.skipIf(chromiumMissing !== undefined)("console playground: the user's choice", () => {
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

  it("sends with the key and the model the user picked, however late the page settles", {
    timeout: 120_000,
  }, async () => {
    const user = await accountWithPassword(gateway, "user");
    const page = await browser.newPage();
    await page.addInitScript(SLOW_EFFECTS);
    await logIn(page, gateway, user.email);
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    const first = await createKey(page, "first");
    await createKey(page, "second");

    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Playground" }).waitFor();
    // Not the default of either list: the older key, the last chat model.
    await page
      .getByLabel("API key", { exact: true })
      .selectOption({ label: `first (${first.slice(0, 7)}…)` });
    const modelSelect = page.getByLabel("Model", { exact: true });
    await modelSelect.locator("option").nth(1).waitFor({ state: "attached" });
    const options = await modelSelect
      .locator("option")
      .evaluateAll((nodes) => nodes.map((node) => (node as HTMLOptionElement).value));
    const chosenModel = options.at(-1)!;
    expect(chosenModel).not.toBe(options[0]);
    await modelSelect.selectOption(chosenModel);
    // Long enough for every held-back effect to have run.
    await page.waitForTimeout(4000);
    expect(await modelSelect.inputValue()).toBe(chosenModel);

    await page.getByLabel("Message", { exact: true }).fill("Which key is this?");
    const sent = page.waitForRequest((request: Request) =>
      request.url().endsWith("/v1/chat/completions"),
    );
    await page.getByRole("button", { name: "Send" }).click();
    const request = await sent;
    expect(request.headers().authorization).toBe(`Bearer ${first}`);
    expect((request.postDataJSON() as { model: string }).model).toBe(chosenModel);
    await expect.poll(() => page.getByTestId("call-cost").count(), { timeout: 20_000 }).toBe(1);
  });
});
