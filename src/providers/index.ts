/**
 * @module providers
 * Upstream adapters (one folder per protocol) and the registry that builds them for routes.
 */
export {
  createHttpClient,
  DEFAULT_TIMEOUTS,
  type HttpClient,
  type UpstreamTimeouts,
} from "./kit/http-client.ts";
export {
  bindUpstreamContext,
  shareUpstreamContext,
  type UpstreamContext,
} from "./kit/upstream-context.ts";
export { createProviderRegistry, type ProviderRegistry } from "./registry.ts";
