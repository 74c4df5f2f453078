/**
 * @module core/model-endpoints
 * The gateway's model endpoints, each prepared once (its validator compiled), by path and by the
 * catalog kinds it serves. Transports register through it (the HTTP layer) or run through it
 * (the MCP layer's runner), and quotes find the endpoint that prices a kind here.
 */
import type { TSchema } from "@sinclair/typebox";
import type { EndpointKind } from "../catalog/index.ts";
import { type PreparedEndpoint, prepareModelEndpoint } from "./model-call.ts";
import type { ModelEndpoint, QuoteTarget } from "./operation.ts";
import type { Services } from "./services.ts";

export interface ModelEndpointSet {
  /** Prepares and adds an endpoint; the first one added for a kind answers its quotes. */
  add<S extends TSchema>(endpoint: ModelEndpoint<S>): PreparedEndpoint<S>;
  get(path: string): PreparedEndpoint | undefined;
  paths(): string[];
  /** The endpoint that prices requests of a kind (chat completions for chat). */
  quoteTarget(kind: EndpointKind): QuoteTarget | undefined;
}

export function createModelEndpointSet(services: Services): ModelEndpointSet {
  const byPath = new Map<string, PreparedEndpoint>();
  const quoteTargets = new Map<EndpointKind, QuoteTarget>();
  return {
    add(endpoint) {
      const prepared = prepareModelEndpoint(services, endpoint);
      byPath.set(endpoint.path, prepared as unknown as PreparedEndpoint);
      for (const kind of endpoint.kinds.filter((kind) => !quoteTargets.has(kind))) {
        quoteTargets.set(kind, {
          path: endpoint.path,
          validate: prepared.validate,
          estimateCost: endpoint.estimateCost as QuoteTarget["estimateCost"],
        });
      }
      return prepared;
    },
    get: (path) => byPath.get(path),
    paths: () => [...byPath.keys()],
    quoteTarget: (kind) => quoteTargets.get(kind),
  };
}
