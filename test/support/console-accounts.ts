/**
 * @module test/support/console-accounts
 * Accounts with a password for the console's tests, made through the admin API, and logging in
 * to the console in a browser page as one of them.
 */
import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { TestGateway } from "./gateway-harness.ts";

export const PASSWORD = "a long enough password";

/** An account that can log in with {@link PASSWORD}; the email is unique unless given. */
export async function accountWithPassword(
  gateway: TestGateway,
  role: "user" | "admin" = "user",
  options: { email?: string; balanceMicros?: number } = {},
): Promise<{ email: string; id: string }> {
  const email = options.email ?? `${role}-${Math.random().toString(36).slice(2)}@example.com`;
  const created = await gateway.request("/v1/admin/accounts", {
    key: gateway.adminKey,
    json: { email, password: PASSWORD, role, balance_micros: options.balanceMicros ?? 5_000_000 },
  });
  expect(created.status).toBe(201);
  return { email, id: ((await created.json()) as { id: string }).id };
}

/** A new API key of the account (its secret). */
export async function newApiKey(gateway: TestGateway, accountId: string): Promise<string> {
  const key = await gateway.request(`/v1/admin/accounts/${accountId}/keys`, {
    key: gateway.adminKey,
    json: { name: "api" },
  });
  expect(key.status).toBe(201);
  return ((await key.json()) as { key: string }).key;
}

/** Logs in to the console in `page` and waits for the first page (Balance). */
export async function logIn(page: Page, gateway: TestGateway, email: string): Promise<void> {
  await page.goto(`${gateway.url}/console/login`);
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { level: 1, name: "Balance" }).waitFor();
}
