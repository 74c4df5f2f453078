/**
 * @module catalog/catalog
 * The model catalog at run time: lookup by id or alias, listing for a key, and each model's
 * resolved routes (adapter, base URL, credential). Routes are resolved once at boot, by the rules
 * of `route-resolution.ts`.
 */
import type { CatalogData } from "./load-catalog.ts";
import {
  isMissingCredential,
  type MissingCredential,
  type ResolvedRoute,
  type RouteResolution,
  resolveRoute,
  sandboxServesAll,
} from "./route-resolution.ts";
import type { EndpointKind, ModelEntry } from "./schema.ts";

export interface CatalogModel extends ModelEntry {
  resolvedRoutes: ResolvedRoute[];
  /** Routes left out because their credential variable is not set, in route order. */
  missingCredentials: MissingCredential[];
}

export class Catalog {
  readonly #models = new Map<string, CatalogModel>();
  readonly #aliases = new Map<string, string>();
  readonly #ordered: CatalogModel[];
  readonly #deploymentAliases: Record<string, string>;

  constructor(data: CatalogData, resolution: RouteResolution) {
    this.#deploymentAliases = resolution.modelAliases ?? {};
    const rules = {
      ...resolution,
      sandboxServesAll:
        resolution.sandboxServesAll ??
        sandboxServesAll(data, resolution.env, resolution.sandboxMode),
    };
    for (const entry of data.models) {
      const resolvedRoutes: ResolvedRoute[] = [];
      const missingCredentials: MissingCredential[] = [];
      for (const route of entry.routes) {
        const resolved = resolveRoute(route, data.vendors[route.vendor], rules);
        if (resolved === undefined) continue;
        if (isMissingCredential(resolved)) missingCredentials.push(resolved);
        else resolvedRoutes.push(resolved);
      }
      const model: CatalogModel = { ...entry, resolvedRoutes, missingCredentials };
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
