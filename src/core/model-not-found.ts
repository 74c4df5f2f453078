/**
 * @module core/model-not-found
 * The error for a model name that resolves to nothing: `404 model_not_found`, whose message
 * names up to three close ids the calling key may use ("Did you mean …?", `closestIds`), and,
 * for a `claude-…` name (Claude Code asks for ids newer than the catalog), how to map it with
 * `model_aliases`. An endpoint whose contract answers an unknown model with 400 (speech, spec
 * section 7) gets `400 endpoint_model_mismatch` naming the models it serves instead.
 */
import { type Catalog, closestIds, type EndpointKind } from "../catalog/index.ts";
import { fillTemplate, GatewayError } from "../errors/index.ts";

export interface UnknownModel {
  /** The name the request asked for. */
  requested: string;
  /** The calling key's model allowlist (empty: every model). */
  allowlist: readonly string[];
  /** The endpoint kinds of the path asked on; suggestions are models of these kinds. */
  kinds?: readonly EndpointKind[];
  /** Answer with 400 `endpoint_model_mismatch` naming the models of `path` (spec 7, speech). */
  mismatchOn?: string;
}

function quotedList(ids: readonly string[]): string {
  const quoted = ids.map((id) => `'${id}'`);
  return quoted.length <= 1
    ? (quoted[0] ?? "")
    : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

const CLAUDE_HINT =
  " Claude Code asks for Claude ids newer than this gateway's catalog: map them to a served model with `model_aliases` (docs/claude-code.md).";

export function modelNotFound(catalog: Catalog, unknown: UnknownModel): GatewayError {
  const usable = catalog
    .listAllowed(unknown.allowlist)
    .filter((model) => !unknown.kinds || unknown.kinds.includes(model.endpoint))
    .map((model) => model.id);
  if (unknown.mismatchOn !== undefined) {
    const nearest = closestIds(unknown.requested, usable, usable.length);
    const listed = [...nearest, ...usable.filter((id) => !nearest.includes(id))];
    const message = fillTemplate("The model '{model}' is not served on {path}; use {models}.", {
      model: unknown.requested,
      path: unknown.mismatchOn,
      models: quotedList(listed),
    });
    return new GatewayError("endpoint_model_mismatch", {}, { param: "model", message });
  }
  const close = closestIds(unknown.requested, usable);
  const suggestion =
    (close.length ? ` Did you mean ${quotedList(close)}?` : "") +
    (/^claude-/i.test(unknown.requested) ? CLAUDE_HINT : "");
  return new GatewayError(
    "model_not_found",
    { model: unknown.requested, suggestion },
    { param: "model" },
  );
}
