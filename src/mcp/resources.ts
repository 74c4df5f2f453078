/**
 * @module mcp/resources
 * The MCP resources, all read as the calling key: the catalog (only the models the key may use,
 * with capabilities), pricing per model with its units, the API reference (one Markdown document
 * per endpoint), and the account's balance and recent usage; templates for one model's entry and
 * price. URIs use the `switchyard://` scheme.
 */
import { unavailableReason } from "../core/model-availability.ts";
import { accountBalance, accountUsage } from "../endpoints/billing/routes.ts";
import { toOpenAIModel } from "../endpoints/models/route.ts";
import { GatewayError } from "../errors/index.ts";
import type { RouteDoc } from "../http/openapi.ts";
import { referenceMarkdown, referenceSlug } from "./reference.ts";
import type { ToolContext } from "./tool.ts";

export type ResourceContext = Pick<ToolContext, "services" | "caller">;

export interface ResourceEntry {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export interface ResourceContents {
  [key: string]: unknown;
  contents: { uri: string; mimeType: string; text: string }[];
}

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: "switchyard://models/{id}",
    name: "model",
    title: "One model",
    description: "A model's catalog entry: kind, capabilities, prices, availability.",
    mimeType: "application/json",
  },
  {
    uriTemplate: "switchyard://pricing/{id}",
    name: "model-pricing",
    title: "One model's prices",
    description: "A model's prices in integer µUSD, the unit named in each key.",
    mimeType: "application/json",
  },
  {
    uriTemplate: "switchyard://reference/{endpoint}",
    name: "reference",
    title: "API reference of one endpoint",
    description: "Markdown generated from the schemas that validate the endpoint's requests.",
    mimeType: "text/markdown",
  },
];

const STATIC: ResourceEntry[] = [
  {
    uri: "switchyard://catalog",
    name: "catalog",
    title: "Models this key may use",
    description: "Every model the key may use, with its kind, capabilities and availability.",
    mimeType: "application/json",
  },
  {
    uri: "switchyard://pricing",
    name: "pricing",
    title: "Prices",
    description: "Prices per model in integer µUSD (1,000,000 = 1 USD); each key names its unit.",
    mimeType: "application/json",
  },
  {
    uri: "switchyard://account/balance",
    name: "balance",
    title: "Balance",
    description: "The account's balance, held and available amounts in µUSD.",
    mimeType: "application/json",
  },
  {
    uri: "switchyard://account/usage",
    name: "usage",
    title: "Recent usage",
    description: "The account's 50 most recent usage records, newest first.",
    mimeType: "application/json",
  },
];

export function listResources(docs: readonly RouteDoc[]): ResourceEntry[] {
  const reference = docs.map((doc) => {
    const slug = referenceSlug(doc, docs);
    return {
      uri: `switchyard://reference/${slug}`,
      name: `reference-${slug}`,
      title: `${doc.method} ${doc.path}`,
      description: doc.summary,
      mimeType: "text/markdown",
    };
  });
  return [...STATIC, ...reference];
}

function json(uri: string, value: unknown): ResourceContents {
  return {
    contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value, null, 2) }],
  };
}

function notFound(uri: string): GatewayError {
  return new GatewayError("not_found", {}, { message: `No resource '${uri.slice(0, 300)}'.` });
}

function allowedModel(context: ResourceContext, id: string, uri: string) {
  const model = context.services.catalog
    .listAllowed(context.caller.key.models)
    .find((entry) => entry.id === id);
  if (!model) throw notFound(uri);
  return model;
}

export async function readResource(
  context: ResourceContext,
  docs: readonly RouteDoc[],
  uri: string,
): Promise<ResourceContents> {
  const { services, caller } = context;
  const describe = (model: Parameters<typeof toOpenAIModel>[0]) =>
    toOpenAIModel(model, (entry) => unavailableReason(entry, services));
  const [, path = ""] = /^switchyard:\/\/(.*)$/.exec(uri) ?? [];
  const [head, ...rest] = path.split("/");
  let tail: string;
  try {
    tail = decodeURIComponent(rest.join("/"));
  } catch {
    throw notFound(uri); // a malformed escape names nothing
  }
  switch (head) {
    case "catalog":
      if (tail) break;
      return json(uri, { models: services.catalog.listAllowed(caller.key.models).map(describe) });
    case "models":
      return json(uri, describe(allowedModel(context, tail, uri)));
    case "pricing": {
      if (!tail) {
        const models = services.catalog.listAllowed(caller.key.models);
        return json(uri, {
          currency: "USD",
          unit: "micro-USD (1,000,000 = 1 USD); each price key names what it is per",
          models: Object.fromEntries(models.map((model) => [model.id, model.pricing])),
        });
      }
      const model = allowedModel(context, tail, uri);
      return json(uri, { model: model.id, currency: "USD", pricing: model.pricing });
    }
    case "account":
      if (tail === "balance") return json(uri, await accountBalance(services, caller.accountId));
      if (tail === "usage")
        return json(uri, await accountUsage(services, caller.accountId, { limit: "50" }));
      break;
    case "reference": {
      const doc = docs.find((entry) => referenceSlug(entry, docs) === tail);
      if (!doc) break;
      return { contents: [{ uri, mimeType: "text/markdown", text: referenceMarkdown(doc) }] };
    }
  }
  throw notFound(uri);
}
