/**
 * @module endpoints/responses/schema
 * Request schema of `POST /v1/responses` (OpenAI's Responses API) and the shapes of its input
 * items. Every chat model serves it: the request is translated to the gateway's chat call
 * (`convert-responses-request.ts`). Built-in (hosted) tools pass the schema so that they can be
 * refused by name; fields the gateway does not model are accepted and named in
 * `x-switchyard-warnings`, except those whose silent loss would change the answer
 * (`validate-responses-request.ts`).
 */
import { type Static, Type } from "@sinclair/typebox";

const InputText = Type.Object({ type: Type.Literal("input_text"), text: Type.String() });
const InputImage = Type.Object({
  type: Type.Literal("input_image"),
  image_url: Type.Optional(Type.String({ minLength: 1 })),
  file_id: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
});
/** Assistant text replayed from an earlier response. */
const OutputText = Type.Object({
  type: Type.Literal("output_text"),
  text: Type.String(),
  annotations: Type.Optional(Type.Array(Type.Unknown())),
  logprobs: Type.Optional(Type.Array(Type.Unknown())),
});
const Refusal = Type.Object({ type: Type.Literal("refusal"), refusal: Type.String() });
const ContentPart = Type.Union([InputText, InputImage, OutputText, Refusal]);
const SummaryPart = Type.Object({ type: Type.Literal("summary_text"), text: Type.String() });
const ReasoningPart = Type.Object({ type: Type.Literal("reasoning_text"), text: Type.String() });
/** The fields each content part may carry, by its type (what is stored of it). */
export const CONTENT_PART_FIELDS: Record<string, readonly string[]> = Object.fromEntries(
  [InputText, InputImage, OutputText, Refusal, SummaryPart, ReasoningPart].map((part) => [
    part.properties.type.const,
    Object.keys(part.properties),
  ]),
);
export type ResponsesContentPart = Static<typeof ContentPart>;

/** An item's id and status, bounded: both are stored and copied into every continuation. */
const ItemTag = {
  id: Type.Optional(Type.String({ maxLength: 256 })),
  status: Type.Optional(Type.String({ maxLength: 32 })),
};

export const MessageItem = Type.Object({
  type: Type.Optional(Type.Literal("message")),
  role: Type.Union([
    Type.Literal("user"),
    Type.Literal("assistant"),
    Type.Literal("system"),
    Type.Literal("developer"),
  ]),
  content: Type.Union([Type.String(), Type.Array(ContentPart)]),
  phase: Type.Optional(Type.String({ maxLength: 64 })),
  ...ItemTag,
});

export const FunctionCallItem = Type.Object({
  type: Type.Literal("function_call"),
  call_id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  arguments: Type.String(),
  ...ItemTag,
});

export const FunctionCallOutputItem = Type.Object({
  type: Type.Literal("function_call_output"),
  call_id: Type.String({ minLength: 1 }),
  output: Type.Union([Type.String(), Type.Array(Type.Union([InputText, InputImage]))]),
  ...ItemTag,
});

export const ReasoningItem = Type.Object({
  type: Type.Literal("reasoning"),
  summary: Type.Array(SummaryPart),
  content: Type.Optional(Type.Array(ReasoningPart)),
  encrypted_content: Type.Optional(Type.String()),
  ...ItemTag,
});

/** A reference to a stored item: refused (send the item, or chain with `previous_response_id`). */
const ItemReference = Type.Object({
  type: Type.Literal("item_reference"),
  id: Type.String({ maxLength: 256 }),
});

const InputItem = Type.Union([
  MessageItem,
  FunctionCallItem,
  FunctionCallOutputItem,
  ReasoningItem,
  ItemReference,
]);
export type ResponsesInputItem = Static<typeof InputItem>;
/** The fields each input item may carry, by its type (what is stored of it). */
export const ITEM_FIELDS: Record<string, readonly string[]> = {
  message: Object.keys(MessageItem.properties),
  ...Object.fromEntries(
    [FunctionCallItem, FunctionCallOutputItem, ReasoningItem, ItemReference].map((item) => [
      item.properties.type.const,
      Object.keys(item.properties),
    ]),
  ),
};

/** Hosted tools the vendor runs and bills per use: they pass the schema and are refused. */
export const HOSTED_TOOL_TYPES = [
  "web_search",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "file_search",
  "code_interpreter",
  "image_generation",
  "computer",
  "computer_use_preview",
  "mcp",
  "local_shell",
  "shell",
  "apply_patch",
  "custom",
] as const;

const HostedTool = Type.Object(
  { type: Type.Union(HOSTED_TOOL_TYPES.map((type) => Type.Literal(type))) },
  { additionalProperties: true },
);

export const FunctionTool = Type.Object({
  type: Type.Literal("function"),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
});
export type ResponsesFunctionTool = Static<typeof FunctionTool>;

const ToolChoice = Type.Union([
  Type.Literal("auto"),
  Type.Literal("none"),
  Type.Literal("required"),
  Type.Object({ type: Type.Literal("function"), name: Type.String({ minLength: 1 }) }),
  Type.Object({
    type: Type.Literal("allowed_tools"),
    mode: Type.Union([Type.Literal("auto"), Type.Literal("required")]),
    tools: Type.Array(
      Type.Object(
        { type: Type.Literal("function"), name: Type.String() },
        { additionalProperties: true },
      ),
    ),
  }),
]);

export const TextFormat = Type.Union([
  Type.Object({ type: Type.Literal("text") }),
  Type.Object({ type: Type.Literal("json_object") }),
  Type.Object({
    type: Type.Literal("json_schema"),
    name: Type.String({ minLength: 1, maxLength: 64 }),
    schema: Type.Record(Type.String(), Type.Unknown()),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    description: Type.Optional(Type.String()),
  }),
]);

const Effort = Type.Union(
  ["none", "minimal", "low", "medium", "high", "xhigh"].map((value) => Type.Literal(value)),
);

export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ description: "Model id from `GET /v1/models` (any chat model)." }),
    input: Type.Optional(
      Type.Union([Type.String(), Type.Array(InputItem)], {
        description: "A user message, or a list of input items.",
      }),
    ),
    instructions: Type.Optional(
      Type.String({ description: "System text; not carried over by `previous_response_id`." }),
    ),
    tools: Type.Optional(Type.Array(Type.Union([FunctionTool, HostedTool]))),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 16 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, default: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 1 })),
    text: Type.Optional(
      Type.Object({
        format: Type.Optional(TextFormat),
        verbosity: Type.Optional(
          Type.Union([Type.Literal("low"), Type.Literal("medium"), Type.Literal("high")]),
        ),
      }),
    ),
    reasoning: Type.Optional(
      Type.Object({
        effort: Type.Optional(Effort),
        summary: Type.Optional(
          Type.Union([Type.Literal("auto"), Type.Literal("concise"), Type.Literal("detailed")]),
        ),
      }),
    ),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), {
        maxProperties: 16,
        // TypeBox puts the key's schema in `patternProperties`, where its length is lost.
        propertyNames: { maxLength: 64 },
      }),
    ),
    user: Type.Optional(Type.String()),
    safety_identifier: Type.Optional(Type.String({ maxLength: 64 })),
    prompt_cache_key: Type.Optional(Type.String()),
    store: Type.Optional(
      Type.Boolean({ default: true, description: "Keep the response for GET and chaining." }),
    ),
    previous_response_id: Type.Optional(Type.String({ minLength: 1 })),
    stream: Type.Optional(Type.Boolean({ default: false })),
    truncation: Type.Optional(Type.Union([Type.Literal("auto"), Type.Literal("disabled")])),
    include: Type.Optional(Type.Array(Type.String())),
    service_tier: Type.Optional(
      Type.Union(
        ["auto", "default", "flex", "scale", "priority"].map((tier) => Type.Literal(tier)),
        { description: "Only `auto` and `default` are served; other tiers are refused." },
      ),
    ),
  },
  { additionalProperties: true },
);
export type ResponsesRequest = Static<typeof ResponsesRequest>;

export const ResponseObject = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal("response"),
    created_at: Type.Integer(),
    status: Type.String(),
    model: Type.String(),
    output: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    usage: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  },
  { additionalProperties: true },
);
