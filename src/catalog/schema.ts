/**
 * @module catalog/schema
 * The shape of the model catalog data file (`catalog/*.yaml`) and of operator overrides in
 * `switchyard.yaml`. One TypeBox schema gives validation at boot and the TypeScript types.
 */
import { type Static, Type } from "@sinclair/typebox";

/** Which public API a model serves. Chat models also serve `/v1/messages`. */
export const EndpointKind = Type.Union([
  Type.Literal("chat"),
  Type.Literal("image-generation"),
  Type.Literal("image-edit"),
  Type.Literal("video"),
  Type.Literal("embedding"),
  Type.Literal("speech"),
]);
export type EndpointKind = Static<typeof EndpointKind>;

/** Wire protocol an adapter speaks upstream. */
export const AdapterName = Type.Union([
  Type.Literal("openai-compatible"),
  Type.Literal("anthropic"),
  Type.Literal("gemini"),
  Type.Literal("dashscope"),
  Type.Literal("voyage"),
  Type.Literal("xai-video"),
  Type.Literal("openai-images"),
]);
export type AdapterName = Static<typeof AdapterName>;

const Micros = Type.Integer({ minimum: 0, description: "Integer micro-USD (1 USD = 1,000,000)." });

export const Pricing = Type.Object(
  {
    per_1m_tokens: Type.Optional(
      Type.Object(
        {
          input: Micros,
          output: Micros,
          cached_input: Type.Optional(Micros),
          cache_write: Type.Optional(Micros),
          cache_write_1h: Type.Optional(Micros),
          reasoning: Type.Optional(Micros),
        },
        { additionalProperties: false, description: "Micro-USD per 1,000,000 tokens." },
      ),
    ),
    per_image: Type.Optional(
      Type.Object(
        {
          default: Micros,
          by_size: Type.Optional(Type.Record(Type.String(), Micros)),
          by_size_quality: Type.Optional(
            Type.Record(Type.String(), Type.Record(Type.String(), Micros)),
          ),
        },
        { additionalProperties: false, description: "Micro-USD per output image." },
      ),
    ),
    per_video_second: Type.Optional(
      Type.Record(Type.String(), Micros, {
        description: "Micro-USD per second, keyed by resolution.",
      }),
    ),
    per_10k_characters: Type.Optional(Micros),
  },
  { additionalProperties: false },
);
export type Pricing = Static<typeof Pricing>;

/** A chat sampling setting, by its OpenAI name. */
export const SamplingSetting = Type.Union([
  Type.Literal("temperature"),
  Type.Literal("top_p"),
  Type.Literal("presence_penalty"),
  Type.Literal("frequency_penalty"),
  Type.Literal("logprobs"),
]);

export const Capabilities = Type.Object(
  {
    streaming: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Boolean()),
    vision: Type.Optional(Type.Boolean()),
    reasoning: Type.Optional(Type.Boolean()),
    json_mode: Type.Optional(Type.Boolean()),
    context_window: Type.Optional(Type.Integer({ minimum: 1 })),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Chat: the most choices (`n`) one request may ask for; 1 when absent. */
    max_choices: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * Chat over the OpenAI protocol: the field the vendor takes the output cap in for this model
     * (`max_tokens` when absent; OpenAI's reasoning models refuse it for `max_completion_tokens`).
     */
    output_cap_field: Type.Optional(
      Type.Union([Type.Literal("max_tokens"), Type.Literal("max_completion_tokens")]),
    ),
    /**
     * Chat: sampling settings the model takes only at their default (temperature and top_p 1,
     * penalties 0, no logprobs), as OpenAI's reasoning models; other values are dropped with a
     * warning rather than sent.
     */
    fixed_sampling: Type.Optional(Type.Array(SamplingSetting)),
    /** Image models */
    mask: Type.Optional(Type.Boolean()),
    multiple_images: Type.Optional(Type.Boolean()),
    reference_images: Type.Optional(Type.Object({ min: Type.Integer(), max: Type.Integer() })),
    sizes: Type.Optional(Type.Array(Type.String())),
    qualities: Type.Optional(Type.Array(Type.String())),
    output_formats: Type.Optional(Type.Array(Type.String())),
    free_form_size: Type.Optional(Type.Boolean()),
    /** Embedding models */
    dimensions: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }))),
    default_dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    max_inputs_per_call: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Speech models */
    voices: Type.Optional(Type.Array(Type.String())),
    audio_formats: Type.Optional(Type.Array(Type.String())),
    instructions: Type.Optional(Type.Boolean()),
    /** Video models */
    resolutions: Type.Optional(Type.Array(Type.String())),
    durations: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }))),
    aspect_ratios: Type.Optional(Type.Array(Type.String())),
    video_protocol: Type.Optional(Type.String()),
    video_input: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type Capabilities = Static<typeof Capabilities>;

export const RouteEntry = Type.Object(
  {
    vendor: Type.String({
      description: "Key into `vendors`; supplies adapter, base URL and credential.",
    }),
    upstream_model: Type.String({ minLength: 1 }),
    /**
     * The vendor's model for image generations at a free-form size (one not among the model's
     * `sizes`), when `upstream_model` makes only those (gpt-image-2 beside gpt-image-1.5).
     */
    free_form_upstream_model: Type.Optional(Type.String({ minLength: 1 })),
    adapter: Type.Optional(AdapterName),
    base_url: Type.Optional(Type.String()),
    credential_env: Type.Optional(Type.String()),
    weight: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Overrides `upstream.first_byte_timeout_ms` for this route. */
    first_byte_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Overrides `upstream.idle_timeout_ms` for this route. */
    idle_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type RouteEntry = Static<typeof RouteEntry>;

export const ModelEntry = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    endpoint: EndpointKind,
    family: Type.String(),
    display_name: Type.String(),
    owned_by: Type.String(),
    created: Type.Optional(Type.Integer({ description: "Unix seconds the model was published." })),
    aliases: Type.Optional(Type.Array(Type.String())),
    capabilities: Type.Optional(Capabilities),
    pricing: Pricing,
    routes: Type.Array(RouteEntry, { minItems: 1 }),
    route_strategy: Type.Optional(Type.Union([Type.Literal("fallback"), Type.Literal("weighted")])),
  },
  { additionalProperties: false },
);
export type ModelEntry = Static<typeof ModelEntry>;

export const VendorEntry = Type.Object(
  {
    adapter: AdapterName,
    base_url: Type.String(),
    credential_env: Type.String(),
    /** Path under the sandbox's base URL that emulates this vendor. */
    sandbox_path: Type.String(),
  },
  { additionalProperties: false },
);
export type VendorEntry = Static<typeof VendorEntry>;

export const CatalogFile = Type.Object(
  {
    vendors: Type.Optional(Type.Record(Type.String(), VendorEntry)),
    models: Type.Optional(Type.Array(ModelEntry)),
  },
  { additionalProperties: false },
);
export type CatalogFile = Static<typeof CatalogFile>;
