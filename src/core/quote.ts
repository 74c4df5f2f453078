/**
 * @module core/quote
 * The most a request would cost (its billing hold) with the price breakdown, without running it:
 * the same model resolution, validation and estimate the request itself would get. Serves
 * `POST /v1/billing/quote` and the MCP `quote` tool.
 */
import { GatewayError } from "../errors/index.ts";
import type { ApiKeyRecord } from "../store/index.ts";
import type { ModelEndpointSet } from "./model-endpoints.ts";
import { requestedModel, resolveModel } from "./resolve-model.ts";
import type { Services } from "./services.ts";

export interface Quote {
  object: "billing.quote";
  model: string;
  endpoint: string;
  currency: "USD";
  max_cost_micros: number;
  line_items: {
    item: string;
    units: number;
    unit_price_micros: number;
    per_units: number;
    cost_micros: number;
  }[];
  pricing: unknown;
}

export async function quoteRequest(
  services: Pick<Services, "catalog">,
  endpoints: ModelEndpointSet,
  key: Pick<ApiKeyRecord, "models" | "modelAliases">,
  body: unknown,
): Promise<Quote> {
  const model = resolveModel(services, key, requestedModel(body), {
    path: "/v1/billing/quote",
    requireVendor: false,
  });
  const target = endpoints.quoteTarget(model.endpoint);
  if (!target) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Models of kind '${model.endpoint}' cannot be quoted yet.` },
      { param: "model" },
    );
  }
  const validated = target.validate(body);
  const estimate = (await target.estimateCost?.(validated, model)) ?? {
    costMicros: 0,
    lineItems: [],
  };
  return {
    object: "billing.quote",
    model: model.id,
    endpoint: target.path,
    currency: "USD",
    max_cost_micros: estimate.costMicros,
    line_items: estimate.lineItems.map((item) => ({
      item: item.item,
      units: item.units,
      unit_price_micros: item.unitPriceMicros,
      per_units: item.per,
      cost_micros: item.costMicros,
    })),
    pricing: model.pricing,
  };
}
