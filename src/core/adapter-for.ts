/**
 * @module core/adapter-for
 * The adapter of one route, by capability, or the `provider_not_configured` error when the
 * registry has none for it: the one lookup every operation uses.
 */
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { ProviderRegistry } from "../providers/index.ts";

type AdapterLookup = "chatModel" | "embeddingModel" | "speechModel" | "imageModel" | "videoModel";

/** The adapter `kind` of `route`; throws `provider_not_configured` naming `model`. */
export function adapterFor<K extends AdapterLookup>(
  providers: ProviderRegistry,
  kind: K,
  route: ResolvedRoute,
  model: Pick<CatalogModel, "id">,
): NonNullable<ReturnType<ProviderRegistry[K]>> {
  const adapter = providers[kind](route) as ReturnType<ProviderRegistry[K]> | undefined;
  if (!adapter) throw new GatewayError("provider_not_configured", { model: model.id });
  return adapter as NonNullable<ReturnType<ProviderRegistry[K]>>;
}
