/**
 * @module endpoints/responses/native-responses
 * The native route of `/v1/responses`: a route whose vendor serves the Responses API itself
 * (OpenAI) receives the request as a Responses request, not translated to chat. The gateway
 * keeps the conversation state, so the upstream never has to: the continued conversation's
 * items are put in `input` (without item ids or statuses, and without reasoning items it could
 * not read back), `previous_response_id` is not sent, `store` is always false and reasoning is
 * asked for with its encrypted content, so that a later turn can hand it back. The Response
 * and the events come back as they are, with the gateway's own response id and the client's
 * own `model`, `store`, `previous_response_id` and `metadata` put back into each snapshot; the
 * usage is the vendor's.
 */
import type { StreamFrame } from "../../core/operation.ts";
import { knownItemFields } from "./known-fields.ts";
import type { ResponsesInputItem, ResponsesRequest } from "./schema.ts";

/** Request fields a native route receives as the client sent them. */
const FORWARDED = [
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "temperature",
  "top_p",
  "text",
  "reasoning",
  "metadata",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "service_tier",
  "truncation",
  "include",
  "stream_options",
] as const;

const ENCRYPTED_REASONING = "reasoning.encrypted_content";

/**
 * An item as the upstream receives it: its known fields only (what a client adds besides is
 * not sent), no ids (the upstream keeps nothing), no statuses.
 */
function upstreamItem(item: ResponsesInputItem): Record<string, unknown> | undefined {
  // A reasoning item is only readable by its vendor through its encrypted content.
  if (item.type === "reasoning" && !item.encrypted_content) return undefined;
  const { id: _id, status: _status, ...rest } = knownItemFields(item);
  return rest;
}

/** The body a native route receives. */
export function nativeResponsesBody(
  body: ResponsesRequest,
  prior: readonly ResponsesInputItem[],
  upstreamModel: string,
): Record<string, unknown> {
  const fields = body as Record<string, unknown>;
  const own: ResponsesInputItem[] =
    typeof body.input === "string"
      ? [{ type: "message", role: "user", content: body.input }]
      : (body.input ?? []);
  const out: Record<string, unknown> = {
    model: upstreamModel,
    input: [...prior, ...own].flatMap((item) => upstreamItem(item) ?? []),
    store: false,
  };
  for (const field of FORWARDED) {
    if (fields[field] !== undefined && (field !== "stream_options" || body.stream))
      out[field] = fields[field];
  }
  // Reasoning comes back readable by OpenAI later (with `store: false` it keeps nothing), so a
  // continued conversation can hand it back.
  const include = Array.isArray(body.include) ? body.include : [];
  if (!include.includes(ENCRYPTED_REASONING)) out.include = [...include, ENCRYPTED_REASONING];
  return out;
}

/**
 * A Response snapshot with the client's view put back. Its id is the gateway's own (`id`, made
 * once per request), not the vendor's: the gateway stores the response under it, and a vendor's
 * id is not the gateway's to trust unique (a proxy or a compatible server may repeat one).
 */
export function clientSnapshot(
  snapshot: Record<string, unknown>,
  body: ResponsesRequest,
  view: { id: string; model: string },
): Record<string, unknown> {
  return {
    ...snapshot,
    id: view.id,
    model: view.model,
    store: body.store ?? true,
    previous_response_id: body.previous_response_id ?? null,
    metadata: body.metadata ?? {},
  };
}

/** Relays upstream events as named frames, each snapshot in the client's view. */
export class NativeRelay {
  #lastSequence = -1;
  #snapshot: Record<string, unknown> = {};
  readonly #body: ResponsesRequest;
  readonly #view: { id: string; model: string };

  constructor(body: ResponsesRequest, view: { id: string; model: string }) {
    this.#body = body;
    this.#view = view;
  }

  frame(event: string, data: Record<string, unknown>): StreamFrame {
    if (typeof data.sequence_number === "number") this.#lastSequence = data.sequence_number;
    const response = data.response;
    if (typeof response !== "object" || response === null) return { event, data };
    this.#snapshot = clientSnapshot(response as Record<string, unknown>, this.#body, this.#view);
    return { event, data: { ...data, response: this.#snapshot } };
  }

  /** The latest snapshot (the final Response once the terminal event went by). */
  get snapshot(): Record<string, unknown> {
    return this.#snapshot;
  }

  /** The gateway's own ending for a stream the upstream broke: `error`, `response.failed`. */
  failed(error: unknown): StreamFrame[] {
    const message =
      error instanceof Error && error.message ? error.message : "Upstream stream failed.";
    const next = () => ++this.#lastSequence;
    return [
      {
        event: "error",
        data: {
          type: "error",
          sequence_number: next(),
          error: { type: "server_error", code: "server_error", message, param: null },
        },
      },
      {
        event: "response.failed",
        data: {
          type: "response.failed",
          sequence_number: next(),
          response: {
            ...this.#snapshot,
            status: "failed",
            error: { code: "server_error", message },
          },
        },
      },
    ];
  }
}
