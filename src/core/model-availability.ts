/**
 * @module core/model-availability
 * Whether a model can be served here and, when not, why: the one rule that `GET /v1/models`,
 * every model endpoint and count_tokens share. A model whose routes all lack their credential
 * answers `503 vendor_not_configured`, naming the variables that would enable it.
 */
import type { CatalogModel } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { Services } from "./services.ts";

/** The error for a model none of whose routes has its credential set, else `undefined`. */
export function vendorNotConfigured(model: CatalogModel): GatewayError | undefined {
  if (model.resolvedRoutes.length > 0 || model.missingCredentials.length === 0) return undefined;
  const vendors = [...new Set(model.missingCredentials.map((missing) => missing.vendor))];
  const variables = [...new Set(model.missingCredentials.map((missing) => missing.credentialEnv))];
  return new GatewayError(
    "vendor_not_configured",
    { model: model.id, vendor: vendors.join(", "), credential: variables.join(" or ") },
    // Retrying cannot help until the operator sets a credential; the official SDKs obey this.
    { headers: { "x-should-retry": "false" } },
  );
}

/** Why a model cannot be served (`code` and `message` of the error it answers), or `undefined`. */
export function unavailableReason(
  model: CatalogModel,
  services: Pick<Services, "providers">,
): { code: string; message: string } | undefined {
  if (model.resolvedRoutes.some((route) => services.providers.serves(model.endpoint, route)))
    return undefined;
  const error =
    vendorNotConfigured(model) ?? new GatewayError("provider_not_configured", { model: model.id });
  return { code: error.code, message: error.message };
}
