/**
 * @module endpoints/chat-model-rules
 * The request rules a chat model's vendor enforces, read from the model's catalog capabilities
 * (`output_cap_field`, `fixed_sampling`, `max_output_tokens`) into the normalized call options,
 * for both chat endpoints; the adapters shape the upstream body by them.
 */
import type { CatalogModel } from "../catalog/index.ts";
import type { ChatModelRules } from "../spec/index.ts";

export function chatModelRules(model: CatalogModel): ChatModelRules | undefined {
  const capabilities = model.capabilities;
  if (!capabilities) return undefined;
  const fixed = capabilities.fixed_sampling;
  const limit = capabilities.max_output_tokens;
  if (!capabilities.output_cap_field && !fixed?.length && limit === undefined) return undefined;
  return {
    ...(capabilities.output_cap_field ? { outputCapField: capabilities.output_cap_field } : {}),
    ...(fixed?.length ? { fixedSampling: fixed } : {}),
    ...(limit !== undefined ? { outputLimit: limit } : {}),
  };
}
