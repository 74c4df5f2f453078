/**
 * @module core/resolve-model
 * The one way a request's `model` becomes a catalog model: read the field, resolve the name
 * (with the key's aliases), check the endpoint kind, the key's allowlist and that a vendor is
 * configured. Model endpoints, count_tokens, quotes and MCP tools all resolve through it, so a
 * name means the same thing and is refused with the same error everywhere.
 */
import { type CatalogModel, type EndpointKind, isModelAllowed } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import { vendorNotConfigured } from "./model-availability.ts";
import { modelNotFound } from "./model-not-found.ts";
import type { Services } from "./services.ts";

export interface ModelTarget {
  /** The kinds the path serves; `undefined` accepts a model of any kind (quotes). */
  kinds?: readonly EndpointKind[];
  /** The path asked on, named in `endpoint_model_mismatch`. */
  path: string;
  /** `endpoint_model_mismatch` instead of `model_not_found` for unknown names (speech, spec 7). */
  unknownModel?: "model_not_found" | "endpoint_model_mismatch";
  /** Refuse a model no vendor is configured for (503); quotes, which run nothing, do not. */
  requireVendor?: boolean;
}

/** The `model` field of a body, or the 400 for a missing or non-string one. */
export function requestedModel(body: unknown): string {
  const holder = body !== null && typeof body === "object" ? (body as { model?: unknown }) : {};
  if (typeof holder.model === "string") return holder.model;
  if ("model" in holder) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: "Invalid 'model': expected string." },
      { param: "model" },
    );
  }
  throw new GatewayError("missing_parameter", { param: "model" }, { param: "model" });
}

/** The catalog model a name means for a key, or the error the name is refused with. */
export function resolveModel(
  services: Pick<Services, "catalog">,
  key: Pick<ApiKeyRecord, "models" | "modelAliases">,
  name: string,
  target: ModelTarget,
): CatalogModel {
  const model = services.catalog.resolve(name, key.modelAliases);
  if (!model) {
    throw modelNotFound(services.catalog, {
      requested: name,
      allowlist: key.models,
      ...(target.kinds ? { kinds: target.kinds } : {}),
      ...(target.unknownModel === "endpoint_model_mismatch" ? { mismatchOn: target.path } : {}),
    });
  }
  if (target.kinds && !target.kinds.includes(model.endpoint)) {
    throw new GatewayError(
      "endpoint_model_mismatch",
      { model: model.id, actual: model.endpoint, path: target.path },
      { param: "model" },
    );
  }
  if (!isModelAllowed(key.models, model.id)) {
    throw new GatewayError("model_not_allowed", { model: model.id }, { param: "model" });
  }
  const unconfigured = target.requireVendor === false ? undefined : vendorNotConfigured(model);
  if (unconfigured) throw unconfigured;
  return model;
}
