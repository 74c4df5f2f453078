/**
 * @module endpoints/responses/keep-response
 * Keeps an answered response for its account (`store`, true unless the request said false):
 * the Response as it was answered, and the items that formed its input — the continued
 * conversation's first, then the request's own, each with an id and messages in full form —
 * so that `GET`, `input_items` and `previous_response_id` need one row.
 */
import type { OperationContext } from "../../core/operation.ts";
import { responsesId } from "./build-responses-response.ts";
import { inputItems } from "./convert-responses-request.ts";
import { knownItemFields } from "./known-fields.ts";
import type { ResponsesInputItem, ResponsesRequest } from "./schema.ts";
import { priorItems } from "./validate-responses-request.ts";

const ITEM_PREFIX = {
  message: "msg",
  function_call: "fc",
  function_call_output: "fco",
  reasoning: "rs",
  item_reference: "ref",
} as const;

/**
 * Input items as they are stored and listed: each with an id, messages with content parts, and
 * only the fields the schema knows (what a client adds besides is not kept for free, nor copied
 * into every continuation of the chain).
 */
export function storedItems(
  items: ResponsesInputItem[],
  served: "native" | "translated" = "native",
): Record<string, unknown>[] {
  return items.map((item) => {
    const type = item.type ?? "message";
    const id = item.id ?? responsesId(ITEM_PREFIX[type]);
    const kept = knownItemFields(item);
    // A translated route neither sends nor bills a reasoning item's encrypted content (only
    // its vendor could read it), so it is not kept to be copied into every continuation either.
    if (served === "translated") delete kept.encrypted_content;
    // Tool calls and their outputs are listed with a status, as OpenAI lists them.
    if (item.type === "function_call" || item.type === "function_call_output")
      return { ...kept, id, status: item.status ?? "completed" };
    if (item.type !== undefined && item.type !== "message") return { ...kept, id };
    const content =
      typeof item.content !== "string"
        ? kept.content
        : item.role === "assistant"
          ? [{ type: "output_text", text: item.content, annotations: [] }]
          : [{ type: "input_text", text: item.content }];
    return { ...kept, id, type: "message", status: item.status ?? "completed", content };
  });
}

export async function keepResponse(
  body: ResponsesRequest,
  context: OperationContext,
  response: { id: string; model: string } & Record<string, unknown>,
  served: "native" | "translated",
): Promise<void> {
  if (body.store === false) return;
  try {
    await context.services.store.saveResponse({
      id: response.id,
      accountId: context.accountId,
      model: response.model,
      response,
      inputItems: [
        ...(priorItems(body) as Record<string, unknown>[]),
        ...storedItems(inputItems(body), served),
      ],
      createdAt: context.services.now(),
    });
  } catch (error) {
    // Charged and answered already: the client gets its answer; only reading it back fails.
    context.services.logger.error(
      { err: error, requestId: context.requestId },
      "storing the response failed",
    );
  }
}
