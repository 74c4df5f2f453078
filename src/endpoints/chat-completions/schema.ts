/**
 * @module endpoints/chat-completions/schema
 * Request and response schemas of `POST /v1/chat/completions` (spec 2.1, 2.2, 8). Besides the
 * fields the gateway models, the schema lists the OpenAI fields it forwards as they are (see
 * `request-fields.ts`); unknown fields are accepted but never forwarded (the response names them
 * in `x-switchyard-warnings`).
 */
import { type Static, Type } from "@sinclair/typebox";

const TextPart = Type.Object({ type: Type.Literal("text"), text: Type.String() });
const ImagePart = Type.Object({
  type: Type.Literal("image_url"),
  image_url: Type.Object({
    url: Type.String({ minLength: 1 }),
    detail: Type.Optional(Type.String()),
  }),
});
const ContentPart = Type.Union([TextPart, ImagePart]);
const Content = Type.Union([Type.String(), Type.Array(ContentPart)]);
export type ChatRequestContent = Static<typeof Content>;

const ToolCall = Type.Object({
  id: Type.String(),
  type: Type.Optional(Type.Literal("function")),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

export const ChatMessageSchema = Type.Union([
  Type.Object({
    role: Type.Union([Type.Literal("system"), Type.Literal("developer"), Type.Literal("user")]),
    content: Content,
    name: Type.Optional(Type.String()),
  }),
  Type.Object({
    role: Type.Literal("assistant"),
    content: Type.Optional(Type.Union([Content, Type.Null()])),
    name: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(ToolCall)),
    reasoning_content: Type.Optional(Type.String()),
  }),
  Type.Object({
    role: Type.Literal("tool"),
    content: Content,
    tool_call_id: Type.String({ minLength: 1 }),
  }),
]);

/** Vendors' built-in tools, which they bill per use: named here so they can be refused as such. */
export const BUILT_IN_TOOL_TYPES = [
  "web_search",
  "web_search_preview",
  "file_search",
  "code_interpreter",
  "image_generation",
  "computer_use_preview",
  "mcp",
] as const;

/** A vendor's built-in tool: it passes the schema and is refused with `unsupported_parameter`. */
const BuiltInTool = Type.Object(
  { type: Type.Union(BUILT_IN_TOOL_TYPES.map((type) => Type.Literal(type))) },
  { additionalProperties: true },
);

const FunctionTool = Type.Object({
  type: Type.Literal("function"),
  function: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    strict: Type.Optional(Type.Boolean()),
  }),
});

export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String({ description: "Model id from `GET /v1/models`." }),
    messages: Type.Array(ChatMessageSchema, { minItems: 1 }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, default: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 1 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stream: Type.Optional(Type.Boolean({ default: false })),
    stream_options: Type.Optional(Type.Object({ include_usage: Type.Optional(Type.Boolean()) })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 })])),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2, default: 0 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2, default: 0 })),
    n: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 128,
        description:
          "Choices to generate (each billed); above 1 only where the model's vendor can (`capabilities.max_choices`).",
      }),
    ),
    seed: Type.Optional(Type.Integer()),
    tools: Type.Optional(
      Type.Array(
        Type.Union([
          FunctionTool,
          Type.String({ description: "A tool as JSON text." }),
          BuiltInTool,
        ]),
      ),
    ),
    tool_choice: Type.Optional(
      Type.Union([
        Type.Literal("auto"),
        Type.Literal("none"),
        Type.Literal("required"),
        Type.Object({
          type: Type.Literal("function"),
          function: Type.Object({ name: Type.String() }),
        }),
      ]),
    ),
    response_format: Type.Optional(
      Type.Union([
        Type.Object({ type: Type.Literal("text") }),
        Type.Object({ type: Type.Literal("json_object") }),
        Type.Object({
          type: Type.Literal("json_schema"),
          json_schema: Type.Object({
            name: Type.String(),
            schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
            strict: Type.Optional(Type.Boolean()),
          }),
        }),
      ]),
    ),
    user: Type.Optional(Type.String()),
    // Forwarded as they are to OpenAI-compatible routes (request-fields.ts):
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    logprobs: Type.Optional(Type.Boolean()),
    top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
    logit_bias: Type.Optional(Type.Record(Type.String(), Type.Number())),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), {
        maxProperties: 16,
        // TypeBox puts the key's schema in `patternProperties`, where its length is lost.
        propertyNames: { maxLength: 64 },
        description: "Up to 16 string pairs; recorded on the usage record.",
      }),
    ),
    store: Type.Optional(Type.Boolean()),
    reasoning_effort: Type.Optional(Type.String({ description: "e.g. `low`, `medium`, `high`." })),
    verbosity: Type.Optional(
      Type.Union([Type.Literal("low"), Type.Literal("medium"), Type.Literal("high")]),
    ),
    prediction: Type.Optional(
      Type.Object({
        type: Type.Literal("content"),
        content: Type.Union([Type.String(), Type.Array(TextPart)]),
      }),
    ),
    prompt_cache_key: Type.Optional(Type.String()),
    safety_identifier: Type.Optional(Type.String()),
    service_tier: Type.Optional(
      Type.Union(
        ["auto", "default", "flex", "scale", "priority"].map((tier) => Type.Literal(tier)),
        { description: "Only `auto` and `default` are served; other tiers are refused." },
      ),
    ),
    modalities: Type.Optional(
      Type.Array(Type.Union([Type.Literal("text"), Type.Literal("audio")]), {
        description: "Only `text` is served; audio output is refused.",
      }),
    ),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    thinking: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    enable_thinking: Type.Optional(
      Type.Boolean({ description: "DashScope: only `false` is served." }),
    ),
  },
  { additionalProperties: true },
);
export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;

const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

export const ChatCompletionResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal("chat.completion"),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({
        role: Type.Literal("assistant"),
        content: Type.Union([Type.String(), Type.Null()]),
      }),
      finish_reason: Type.String(),
    }),
  ),
  usage: UsageSchema,
});
