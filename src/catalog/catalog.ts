/**
 * @module catalog/catalog
 * The model catalog at run time: lookup by id or alias, listing for a key, and each model's
 * resolved routes (adapter, base URL, credential). Routes are resolved once at boot: a vendor
 * whose credential variable is set goes to the real vendor, otherwise to the sandbox.
 */
import type { CatalogData } from "./load-catalog.ts";
import type { AdapterName, EndpointKind, ModelEntry, VendorEntry } from "./schema.ts";

export interface ResolvedRoute {
  vendor: string;
  adapter: AdapterName;
  baseUrl: string;
  apiKey: string;
  upstreamModel: string;
  weight: number;
  /** True when the route points at the sandbox rather than the real vendor. */
  sandbox: boolean;
  /** Per-route timeouts; absent fields use the `upstream` configuration. */
  timeouts?: { firstByteMs?: number; idleMs?: number };
}

export interface CatalogModel extends ModelEntry {
  resolvedRoutes: ResolvedRoute[];
}

export interface RouteResolution {
  env: Record<string, string | undefined>;
  /** Deployment-wide model aliases (exact ids or `prefix*` patterns). */
  modelAliases?: Record<string, string>;
  /** Base URL of the sandbox, when one is running. */
  sandboxUrl?: string;
  sandboxMode: "auto" | "always" | "never";
}

export const SANDBOX_CREDENTIAL = "sk-sandbox";

function resolveRoute(
  route: ModelEntry["routes"][number],
  vendor: VendorEntry | undefined,
  resolution: RouteResolution,
): ResolvedRoute | undefined {
  const adapter = route.adapter ?? vendor?.adapter;
  const credentialEnv = route.credential_env ?? vendor?.credential_env;
  const realBaseUrl = route.base_url ?? vendor?.base_url;
  if (!adapter || !realBaseUrl) return undefined;
  const credential = credentialEnv ? resolution.env[credentialEnv] : undefined;
  const explicitRoute = route.base_url !== undefined && !credentialEnv;
  const useSandbox =
    resolution.sandboxMode === "always" ||
    (resolution.sandboxMode === "auto" && !credential && !explicitRoute);
  const base = {
    vendor: route.vendor,
    adapter,
    upstreamModel: route.upstream_model,
    weight: route.weight ?? 1,
    ...(route.first_byte_timeout_ms || route.idle_timeout_ms
      ? { timeouts: { firstByteMs: route.first_byte_timeout_ms, idleMs: route.idle_timeout_ms } }
      : {}),
  };
  if (useSandbox) {
    if (!resolution.sandboxUrl || !vendor) return undefined;
    return {
      ...base,
      baseUrl: resolution.sandboxUrl + vendor.sandbox_path,
      apiKey: SANDBOX_CREDENTIAL,
      sandbox: true,
    };
  }
  if (!credential && !explicitRoute) return undefined;
  return {
    ...base,
    baseUrl: realBaseUrl.replace(/\/$/, ""),
    apiKey: credential ?? "",
    sandbox: false,
  };
}

export class Catalog {
  readonly #models = new Map<string, CatalogModel>();
  readonly #aliases = new Map<string, string>();
  readonly #ordered: CatalogModel[];
  readonly #deploymentAliases: Record<string, string>;

  constructor(data: CatalogData, resolution: RouteResolution) {
    this.#deploymentAliases = resolution.modelAliases ?? {};
    for (const entry of data.models) {
      const resolvedRoutes = entry.routes
        .map((route) => resolveRoute(route, data.vendors[route.vendor], resolution))
        .filter((route): route is ResolvedRoute => route !== undefined);
      const model: CatalogModel = { ...entry, resolvedRoutes };
      this.#models.set(entry.id, model);
      for (const alias of entry.aliases ?? []) this.#aliases.set(alias, entry.id);
    }
    this.#ordered = [...this.#models.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Looks a model up by id or alias. */
  get(idOrAlias: string): CatalogModel | undefined {
    return this.#models.get(idOrAlias) ?? this.#models.get(this.#aliases.get(idOrAlias) ?? "");
  }

  /**
   * The model a request names: the key's aliases, then the deployment's (each exact before
   * `*` patterns, longest pattern first), then catalog ids and catalog aliases.
   */
  resolve(requested: string, keyAliases: Record<string, string> = {}): CatalogModel | undefined {
    const target =
      matchAlias(keyAliases, requested) ?? matchAlias(this.#deploymentAliases, requested);
    return this.get(target ?? requested);
  }

  list(): readonly CatalogModel[] {
    return this.#ordered;
  }

  /** Models a key may use: all when the allowlist is empty. */
  listAllowed(allowlist: readonly string[]): CatalogModel[] {
    if (allowlist.length === 0) return [...this.#ordered];
    const allowed = new Set(allowlist);
    return this.#ordered.filter((model) => allowed.has(model.id));
  }

  countByEndpoint(): Record<EndpointKind, number> {
    const counts = {
      chat: 0,
      "image-generation": 0,
      "image-edit": 0,
      video: 0,
      embedding: 0,
      speech: 0,
    };
    for (const model of this.#ordered) counts[model.endpoint] += 1;
    return counts;
  }
}

export function isModelAllowed(allowlist: readonly string[], modelId: string): boolean {
  return allowlist.length === 0 || allowlist.includes(modelId);
}

/** The target of an exact alias, else of the longest matching `prefix*` pattern. */
export function matchAlias(aliases: Record<string, string>, requested: string): string | undefined {
  if (Object.hasOwn(aliases, requested)) return aliases[requested];
  let best: string | undefined;
  for (const pattern of Object.keys(aliases)) {
    if (!pattern.endsWith("*") || !requested.startsWith(pattern.slice(0, -1))) continue;
    if (best === undefined || pattern.length > best.length) best = pattern;
  }
  return best === undefined ? undefined : aliases[best];
}
