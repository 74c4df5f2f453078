/**
 * @module providers/kit/per-route
 * One adapter per resolved route, built on first use and kept. Resolved routes are built once
 * by the catalog, so the route object itself is the cache key: no key string per request.
 */
import type { ResolvedRoute } from "../../catalog/index.ts";
import type { HttpClient } from "./http-client.ts";

/** What every adapter is built from. */
export interface AdapterConfig {
  baseUrl: string;
  apiKey: string;
  /** The shared client, with the route's own timeouts when it has any. */
  http: HttpClient;
  provider: string;
  upstreamModel: string;
}

/**
 * Wraps `build` (which returns undefined when the route's protocol has no such adapter) so each
 * route is built once; the answer "no adapter" is kept too.
 */
export function perRoute<T>(
  http: HttpClient,
  build: (route: ResolvedRoute, config: AdapterConfig) => T | undefined,
): (route: ResolvedRoute) => T | undefined {
  const built = new WeakMap<ResolvedRoute, { adapter: T | undefined }>();
  return (route) => {
    let entry = built.get(route);
    if (!entry) {
      entry = {
        adapter: build(route, {
          baseUrl: route.baseUrl,
          apiKey: route.apiKey,
          http: route.timeouts ? http.withTimeouts(route.timeouts) : http,
          provider: route.vendor,
          upstreamModel: route.upstreamModel,
        }),
      };
      built.set(route, entry);
    }
    return entry.adapter;
  };
}
