/**
 * @module endpoints/messages/schema
 * `POST /v1/messages` (Anthropic Messages protocol) request schema. Permissive by design: block
 * and field shapes Claude Code and the Anthropic SDKs send are accepted, unknown fields are
 * kept (Anthropic upstreams receive them unchanged; translated routes drop them with a warning).
 */
import { type Static, Type } from "@sinclair/typebox";

const CacheControl = Type.Optional(
  Type.Object({ type: Type.String() }, { additionalProperties: true }),
);

export const TextBlock = Type.Object(
  { type: Type.Literal("text"), text: Type.String(), cache_control: CacheControl },
  { additionalProperties: true },
);

export const ImageBlock = Type.Object(
  {
    type: Type.Literal("image"),
    source: Type.Union([
      Type.Object({ type: Type.Literal("base64"), media_type: Type.String(), data: Type.String() }),
      Type.Object({ type: Type.Literal("url"), url: Type.String() }),
    ]),
    cache_control: CacheControl,
  },
  { additionalProperties: true },
);

export const ToolUseBlock = Type.Object(
  {
    type: Type.Literal("tool_use"),
    id: Type.String(),
    name: Type.String(),
    input: Type.Unknown(),
    cache_control: CacheControl,
  },
  { additionalProperties: true },
);

export const ToolResultBlock = Type.Object(
  {
    type: Type.Literal("tool_result"),
    tool_use_id: Type.String(),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.Union([TextBlock, ImageBlock]))]),
    ),
    is_error: Type.Optional(Type.Boolean()),
    cache_control: CacheControl,
  },
  { additionalProperties: true },
);

export const ThinkingBlock = Type.Object(
  {
    type: Type.Literal("thinking"),
    thinking: Type.String(),
    signature: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const RedactedThinkingBlock = Type.Object(
  { type: Type.Literal("redacted_thinking"), data: Type.String() },
  { additionalProperties: true },
);

/** Documents and server-tool blocks: kept for Anthropic upstreams, summarized or dropped elsewhere. */
export const OtherBlock = Type.Object({ type: Type.String() }, { additionalProperties: true });

export const ContentBlock = Type.Union([
  TextBlock,
  ImageBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  OtherBlock,
]);
export type ContentBlock = Static<typeof ContentBlock>;

export const MessageParam = Type.Object(
  {
    role: Type.Union([Type.Literal("user"), Type.Literal("assistant"), Type.Literal("system")]),
    content: Type.Union([Type.String(), Type.Array(ContentBlock)]),
  },
  { additionalProperties: true },
);
export type MessageParam = Static<typeof MessageParam>;

export const ToolDefinition = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    type: Type.Optional(Type.String({ description: "Server tools carry a versioned type." })),
  },
  { additionalProperties: true },
);

export const MessagesRequest = Type.Object(
  {
    model: Type.String(),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(MessageParam, { minItems: 1 }),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(TextBlock)])),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stream: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Array(ToolDefinition)),
    tool_choice: Type.Optional(
      Type.Object(
        {
          type: Type.Union([
            Type.Literal("auto"),
            Type.Literal("any"),
            Type.Literal("tool"),
            Type.Literal("none"),
          ]),
          name: Type.Optional(Type.String()),
          disable_parallel_tool_use: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: true },
      ),
    ),
    thinking: Type.Optional(
      Type.Object(
        {
          type: Type.Union([
            Type.Literal("enabled"),
            Type.Literal("disabled"),
            Type.Literal("adaptive"),
          ]),
          budget_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: true },
      ),
    ),
    metadata: Type.Optional(
      Type.Object({ user_id: Type.Optional(Type.String()) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
);
export type MessagesRequest = Static<typeof MessagesRequest>;

export const CountTokensRequest = Type.Omit(MessagesRequest, ["max_tokens", "stream"], {
  additionalProperties: true,
});
export type CountTokensRequest = Static<typeof CountTokensRequest>;

/** The non-stream response (Anthropic `Message`). */
export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: Array<Record<string, unknown>>;
  stop_reason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal" | null;
  stop_sequence: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  };
}
