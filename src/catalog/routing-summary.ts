/**
 * @module catalog/routing-summary
 * The start-up banner's account of where requests go: which vendors the sandbox simulates, and
 * which vendors wait for a credential. Said plainly, so nobody mistakes simulated replies for a
 * vendor's.
 */
import type { Catalog } from "./catalog.ts";

export function routingBanner(catalog: Catalog): string[] {
  const simulated = new Set<string>();
  const unconfigured = new Map<string, string>();
  for (const model of catalog.list()) {
    for (const route of model.resolvedRoutes) if (route.sandbox) simulated.add(route.vendor);
    for (const missing of model.missingCredentials)
      unconfigured.set(missing.vendor, missing.credentialEnv);
  }
  const lines: string[] = [];
  if (simulated.size > 0) {
    lines.push(
      `  SANDBOX: replies are simulated, not from real vendors (${[...simulated].sort().join(", ")}).`,
    );
  }
  if (unconfigured.size > 0) {
    const waiting = [...unconfigured]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([vendor, variable]) => `${vendor} (${variable})`);
    lines.push(`  Unavailable until their credential is set: ${waiting.join(", ")}.`);
  }
  return lines;
}
