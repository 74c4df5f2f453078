/**
 * @module endpoints/chat-completions/request-fields
 * Which chat request fields reach the vendor, so that everything sent is billed as sent:
 * - the fields the gateway models (`convert-chat-request.ts`);
 * - `CHAT_EXTRA_FIELDS` (src/spec): options billed as ordinary tokens, passed on as they are;
 * - priced options the gateway cannot bill (a non-default service tier, web search, audio
 *   output, a vendor's built-in tools, DashScope's thinking mode or search) are refused with
 *   400 `unsupported_parameter` naming the field ({@link refuseUnbilledOptions});
 * - any other field is dropped and named in the response's `x-switchyard-warnings`.
 * See docs/request-fields.md.
 */
import { GatewayError } from "../../errors/index.ts";
import { CHAT_EXTRA_FIELDS } from "../../spec/index.ts";
import { BUILT_IN_TOOL_TYPES, type ChatCompletionRequest } from "./schema.ts";

/** Fields the gateway converts itself (`convert-chat-request.ts`). */
export const MODELED_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "stream",
  "stream_options",
  "stop",
  "presence_penalty",
  "frequency_penalty",
  "n",
  "seed",
  "tools",
  "tool_choice",
  "response_format",
  "user",
]);

interface UnbilledOption {
  field: string;
  /** Whether this value asks for something the gateway cannot bill. */
  refused(value: unknown): boolean;
  reason: string;
}

const BUILT_IN: ReadonlySet<string> = new Set(BUILT_IN_TOOL_TYPES);

const UNBILLED: UnbilledOption[] = [
  {
    field: "service_tier",
    refused: (value) => value !== undefined && value !== "auto" && value !== "default",
    reason:
      "is refused for tiers other than 'auto' and 'default': the vendor bills them at other prices than this gateway charges.",
  },
  {
    field: "modalities",
    refused: (value) => Array.isArray(value) && value.includes("audio"),
    reason:
      "is refused with 'audio': audio output is billed per audio token, which this gateway does not charge.",
  },
  {
    field: "audio",
    refused: (value) => value !== undefined,
    reason:
      "is refused: audio output is billed per audio token, which this gateway does not charge.",
  },
  {
    field: "web_search_options",
    refused: (value) => value !== undefined,
    reason: "is refused: web search is billed per search, which this gateway does not charge.",
  },
  {
    field: "search_parameters",
    refused: (value) => value !== undefined,
    reason: "is refused: live search is billed per source, which this gateway does not charge.",
  },
  {
    field: "enable_search",
    refused: (value) => value === true,
    reason: "is refused: web search is billed per search, which this gateway does not charge.",
  },
  {
    field: "enable_thinking",
    refused: (value) => value === true,
    reason:
      "is refused when true: the vendor bills thinking output at another price than this gateway charges.",
  },
];

/** Throws `unsupported_parameter` for the first option the gateway could not bill. */
export function refuseUnbilledOptions(body: ChatCompletionRequest): void {
  const fields = body as Record<string, unknown>;
  for (const option of UNBILLED) {
    if (Object.hasOwn(fields, option.field) && option.refused(fields[option.field])) {
      throw new GatewayError(
        "unsupported_parameter",
        { param: option.field, detail: option.reason },
        { param: option.field },
      );
    }
  }
  body.tools?.forEach((tool, index) => {
    if (typeof tool === "object" && BUILT_IN.has(tool.type)) {
      const param = `tools[${index}]`;
      throw new GatewayError(
        "unsupported_parameter",
        {
          param,
          detail: `is the built-in tool '${tool.type}', which the vendor bills per use and this gateway does not charge; only function tools are served.`,
        },
        { param },
      );
    }
  });
}

/** The forwarded fields the client sent, and the names of the fields that are dropped. */
export function splitExtraFields(body: ChatCompletionRequest): {
  extraBody: Record<string, unknown>;
  dropped: string[];
} {
  const extraBody: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (MODELED_FIELDS.has(key)) continue;
    if (CHAT_EXTRA_FIELDS.has(key)) extraBody[key] = value;
    else dropped.push(key);
  }
  return { extraBody, dropped };
}
