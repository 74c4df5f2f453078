/**
 * @module endpoints/responses/validate-responses-request
 * Rules of a Responses request beyond its schema, and the conversation it continues:
 * - chat-only fields whose silent loss would change the answer (`messages`, `max_tokens`,
 *   `response_format`) and OpenAI-only features (`background`, `conversation`, `prompt`) are
 *   refused with 400 `unsupported_parameter` naming the field and what to send instead;
 * - hosted tools (`web_search`, `file_search`, …) are refused by index: the vendor bills them
 *   per use and this gateway does not; options the chat endpoint refuses for the same reason
 *   (a priced service tier) are refused here too;
 * - image input needs a model that can see;
 * - `resolveConversation` (run by the core before the hold) loads the items of
 *   `previous_response_id` — the account's own stored response only — and checks that every
 *   `function_call_output` answers a `function_call` made before it.
 */
import type { CatalogModel } from "../../catalog/index.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { refuseUnbilledOptions } from "../chat-completions/request-fields.ts";
import { toChatCompletionRequest } from "./convert-responses-request.ts";
import type { ResponsesInputItem, ResponsesRequest } from "./schema.ts";

/** Where a resolved body carries the items of the conversation it continues. */
export const PRIOR_ITEMS: unique symbol = Symbol("responses.priorItems");

export type ResolvedResponsesRequest = ResponsesRequest & {
  [PRIOR_ITEMS]?: ResponsesInputItem[];
};

/** The items of the continued conversation (none for a new one). */
export function priorItems(body: ResponsesRequest): ResponsesInputItem[] {
  return (body as ResolvedResponsesRequest)[PRIOR_ITEMS] ?? [];
}

function unsupported(param: string, detail: string): never {
  throw new GatewayError("unsupported_parameter", { param, detail }, { param });
}

/** Fields of other APIs, with what the Responses API takes instead. */
const MOVED: Record<string, string> = {
  messages: "is not a Responses API field: this parameter has moved to 'input'.",
  max_tokens: "is not a Responses API field: use 'max_output_tokens'.",
  max_completion_tokens: "is not a Responses API field: use 'max_output_tokens'.",
  response_format: "is not a Responses API field: use 'text.format'.",
};

/** OpenAI-only features this gateway does not serve. */
const REFUSED: Record<string, (value: unknown) => string | undefined> = {
  background: (value) =>
    value === true ? "is refused: background responses are not served." : undefined,
  conversation: (value) =>
    value !== undefined
      ? "is refused: conversation objects are not served; continue with 'previous_response_id'."
      : undefined,
  prompt: (value) =>
    value !== undefined ? "is refused: stored prompt templates are not served." : undefined,
};

export function validateResponsesRequest(body: ResponsesRequest, model: CatalogModel): void {
  const fields = body as Record<string, unknown>;
  for (const [field, detail] of Object.entries(MOVED)) {
    if (fields[field] !== undefined) unsupported(field, detail);
  }
  for (const [field, refused] of Object.entries(REFUSED)) {
    const detail = refused(fields[field]);
    if (detail) unsupported(field, detail);
  }
  if (body.input === undefined) {
    throw new GatewayError("missing_parameter", { param: "input" }, { param: "input" });
  }
  if (body.input.length === 0 && body.previous_response_id === undefined) {
    throw new GatewayError(
      "invalid_parameter",
      { detail: "Invalid 'input': it must hold at least one item (or a non-empty string)." },
      { param: "input" },
    );
  }
  body.tools?.forEach((tool, index) => {
    if (tool.type !== "function") {
      unsupported(
        `tools[${index}]`,
        `is the hosted tool '${tool.type}', which the vendor bills per use and this gateway does not charge; only function tools are served.`,
      );
    }
  });
  // The chat endpoint's refusals of priced options apply to the equivalent chat request.
  refuseUnbilledOptions(toChatCompletionRequest(body).chat);
  if (Array.isArray(body.input)) refuseImages(model, [], body.input);
}

/** Where an item carries an image: `content[j]` of a message, `output[j]` of a tool output. */
function imageIn(item: ResponsesInputItem): string | undefined {
  for (const field of ["content", "output"] as const) {
    const parts = (item as { [key: string]: unknown })[field];
    if (!Array.isArray(parts)) continue;
    const at = parts.findIndex((part: { type?: unknown }) => part?.type === "input_image");
    if (at !== -1) return `${field}[${at}]`;
  }
  return undefined;
}

/**
 * A model without vision is sent no image, whether in the request's own items (a message's
 * content, a tool output) or in the conversation it continues.
 */
function refuseImages(
  model: CatalogModel,
  prior: readonly ResponsesInputItem[],
  input: readonly ResponsesInputItem[],
): void {
  if (model.capabilities?.vision !== false) return;
  const refuse = (param: string, where: string) => {
    throw new GatewayError(
      "invalid_parameter",
      { detail: `Invalid '${param}': ${where} the model '${model.id}' does not accept images.` },
      { param },
    );
  };
  if (prior.some((item) => imageIn(item) !== undefined))
    refuse("previous_response_id", "the conversation it continues holds an image, and");
  input.forEach((item, index) => {
    const at = imageIn(item);
    if (at !== undefined) refuse(`input[${index}].${at}`, "");
  });
}

/**
 * Item ids are unique across the conversation (its stored input items are listed and paged by
 * id): one the continued conversation or an earlier item of the input already has is refused.
 */
function refuseDuplicateIds(
  prior: readonly ResponsesInputItem[],
  input: readonly ResponsesInputItem[],
): void {
  const seen = new Set<string>();
  for (const item of prior) if (typeof item.id === "string") seen.add(item.id);
  input.forEach((item, index) => {
    if (typeof item.id !== "string") return;
    if (seen.has(item.id)) {
      const param = `input[${index}].id`;
      throw new GatewayError(
        "invalid_parameter",
        { detail: `Invalid '${param}': duplicate item found with id '${item.id.slice(0, 256)}'.` },
        { param },
      );
    }
    seen.add(item.id);
  });
}

/** Every `function_call_output` answers a call made before it (in the chain or the input). */
function checkToolOutputs(prior: ResponsesInputItem[], input: ResponsesInputItem[]): void {
  const calls = new Set<string>();
  for (const item of prior) if (item.type === "function_call") calls.add(item.call_id);
  input.forEach((item, index) => {
    if (item.type === "function_call") calls.add(item.call_id);
    if (item.type === "function_call_output" && !calls.has(item.call_id)) {
      const param = `input[${index}].call_id`;
      throw new GatewayError(
        "invalid_parameter",
        {
          detail: `Invalid '${param}': no function call found with call_id '${item.call_id}' before this output.`,
        },
        { param },
      );
    }
  });
}

/**
 * The body with the items of the conversation it continues: the stored response's input
 * items (its own chain included) followed by its output, so one lookup serves any depth.
 */
export async function resolveConversation(
  body: ResponsesRequest,
  context: { accountId: string; services: Services; model: CatalogModel },
): Promise<ResolvedResponsesRequest> {
  let prior: ResponsesInputItem[] = [];
  const id = body.previous_response_id;
  if (id !== undefined) {
    const stored = await context.services.store.findResponse(context.accountId, id);
    if (!stored) {
      throw new GatewayError(
        "previous_response_not_found",
        { id: id.slice(0, 200) },
        { param: "previous_response_id" },
      );
    }
    const output = Array.isArray(stored.response.output) ? stored.response.output : [];
    prior = [...stored.inputItems, ...output] as ResponsesInputItem[];
  }
  const input = Array.isArray(body.input) ? body.input : [];
  checkToolOutputs(prior, input);
  refuseDuplicateIds(prior, input);
  refuseImages(context.model, prior, input);
  return prior.length ? { ...body, [PRIOR_ITEMS]: prior } : body;
}
