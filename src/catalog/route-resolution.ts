/**
 * @module catalog/route-resolution
 * Where each route of a model goes, decided once at boot from `sandbox.mode` and the credential
 * variables that are set. `auto` is the demo when no credential is set at all: every vendor
 * route goes to the sandbox. Once any credential is set, `auto` behaves as `never`: a route
 * without its credential goes nowhere and names the variable that would enable it. `always`
 * sends every vendor route to the sandbox. A route with its own `base_url` and no credential
 * variable (a self-hosted server) goes to that URL except under `always`.
 */
import type { CatalogData } from "./load-catalog.ts";
import type { AdapterName, ModelEntry, VendorEntry } from "./schema.ts";

export type SandboxMode = "auto" | "always" | "never";

export interface ResolvedRoute {
  vendor: string;
  adapter: AdapterName;
  baseUrl: string;
  apiKey: string;
  upstreamModel: string;
  /** The vendor's model for image generations at a free-form size (`free_form_upstream_model`). */
  freeFormUpstreamModel?: string;
  weight: number;
  /** True when the route points at the sandbox rather than the real vendor. */
  sandbox: boolean;
  /** Per-route timeouts; absent fields use the `upstream` configuration. */
  timeouts?: { firstByteMs?: number; idleMs?: number };
}

/** A route left out because its credential variable is not set. */
export interface MissingCredential {
  vendor: string;
  credentialEnv: string;
}

export interface RouteResolution {
  env: Record<string, string | undefined>;
  /** Deployment-wide model aliases (exact ids or `prefix*` patterns). */
  modelAliases?: Record<string, string>;
  /** Base URL of the sandbox, when one is running. */
  sandboxUrl?: string;
  sandboxMode: SandboxMode;
  /**
   * Whether the sandbox serves every vendor route, as decided when the gateway started (the
   * sandbox was started then, or not); by default decided from `env` and `sandboxMode`.
   */
  sandboxServesAll?: boolean;
}

export const SANDBOX_CREDENTIAL = "sk-sandbox";

/** The credential variables named by the catalog's vendors and routes that are set. */
export function configuredCredentials(
  data: CatalogData,
  env: Record<string, string | undefined>,
): string[] {
  const names = new Set(Object.values(data.vendors).map((vendor) => vendor.credential_env));
  for (const model of data.models)
    for (const route of model.routes) if (route.credential_env) names.add(route.credential_env);
  return [...names].filter((name) => Boolean(env[name])).sort();
}

/** True when the sandbox serves every vendor route: `always`, or `auto` with no credential set. */
export function sandboxServesAll(
  data: CatalogData,
  env: Record<string, string | undefined>,
  mode: SandboxMode,
): boolean {
  if (mode !== "auto") return mode === "always";
  return configuredCredentials(data, env).length === 0;
}

/**
 * One route's destination: a resolved route, the credential it lacks, or `undefined` when it
 * has nowhere to go (no adapter or base URL, or the sandbox without a vendor path or URL).
 */
export function resolveRoute(
  route: ModelEntry["routes"][number],
  vendor: VendorEntry | undefined,
  resolution: RouteResolution & { sandboxServesAll: boolean },
): ResolvedRoute | MissingCredential | undefined {
  const adapter = route.adapter ?? vendor?.adapter;
  const credentialEnv = route.credential_env ?? vendor?.credential_env;
  const realBaseUrl = route.base_url ?? vendor?.base_url;
  if (!adapter || !realBaseUrl) return undefined;
  const credential = credentialEnv ? resolution.env[credentialEnv] : undefined;
  const selfHosted = route.base_url !== undefined && !credentialEnv;
  const base = {
    vendor: route.vendor,
    adapter,
    upstreamModel: route.upstream_model,
    ...(route.free_form_upstream_model
      ? { freeFormUpstreamModel: route.free_form_upstream_model }
      : {}),
    weight: route.weight ?? 1,
    ...(route.first_byte_timeout_ms || route.idle_timeout_ms
      ? { timeouts: { firstByteMs: route.first_byte_timeout_ms, idleMs: route.idle_timeout_ms } }
      : {}),
  };
  const toSandbox =
    resolution.sandboxMode === "always" || (resolution.sandboxServesAll && !selfHosted);
  if (toSandbox && vendor) {
    if (!resolution.sandboxUrl) return undefined;
    return {
      ...base,
      baseUrl: resolution.sandboxUrl + vendor.sandbox_path,
      apiKey: SANDBOX_CREDENTIAL,
      sandbox: true,
    };
  }
  // A route of no catalog vendor has no sandbox path: under `always` it goes nowhere, otherwise
  // only its own credential can enable it.
  if (toSandbox && resolution.sandboxMode === "always") return undefined;
  if (!credential && !selfHosted) {
    return credentialEnv ? { vendor: route.vendor, credentialEnv } : undefined;
  }
  return {
    ...base,
    baseUrl: realBaseUrl.replace(/\/$/, ""),
    apiKey: credential ?? "",
    sandbox: false,
  };
}

export function isMissingCredential(
  value: ResolvedRoute | MissingCredential,
): value is MissingCredential {
  return !("adapter" in value);
}
