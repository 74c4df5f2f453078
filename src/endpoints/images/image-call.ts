/**
 * @module endpoints/images/image-call
 * Calls the model's image adapter over its routes (fallback on retryable failures, as for chat)
 * and shapes the parts of a result every image response shares.
 */
import type { ResolvedRoute } from "../../catalog/index.ts";
import { adapterFor } from "../../core/adapter-for.ts";
import type { OperationContext } from "../../core/operation.ts";
import { GatewayError } from "../../errors/index.ts";
import { attemptRoutes, logAttempts } from "../../routing/index.ts";
import { type ImageModel, type ImageResult, UpstreamError } from "../../spec/index.ts";

/**
 * Calls the route's image model (with fallback) and keeps at most the `asked` images: the hold
 * covers that many, so more from a vendor would be delivered unbilled. The surplus is dropped
 * with a warning (`x-switchyard-warnings`).
 */
export async function callImageModel(
  context: OperationContext,
  asked: number,
  call: (model: ImageModel, route: ResolvedRoute) => Promise<ImageResult>,
): Promise<ImageResult> {
  const result = await attemptRoutes(
    context.model,
    (route) => {
      return call(
        adapterFor(context.services.providers, "imageModel", route, context.model),
        route,
      );
    },
    logAttempts(context),
    context.services.routeHealth,
  );
  if (result.images.length <= asked) return result;
  return {
    ...result,
    images: result.images.slice(0, asked),
    warnings: [
      ...result.warnings,
      {
        type: "other",
        message: `The upstream answered ${result.images.length} images for ${asked} asked; the first ${asked} are kept.`,
      },
    ],
  };
}

/**
 * For provider-dialect (DashScope) answers: a vendor 429 keeps the vendor's own code
 * (`Throttling.RateQuota`), as the vendor's other 4xx codes already do.
 */
export function keepVendorRateLimitCode(error: unknown): unknown {
  if (!UpstreamError.isInstance(error) || error.status !== 429 || !error.vendorCode) return error;
  return new GatewayError(
    "upstream_rate_limited",
    { detail: error.message },
    {
      providerCode: error.vendorCode,
      message: error.message,
      cause: error,
      ...(error.retryAfterSeconds === undefined
        ? {}
        : { headers: { "retry-after": String(error.retryAfterSeconds) } }),
    },
  );
}
