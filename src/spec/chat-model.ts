/**
 * @module spec/chat-model
 * The chat capability every chat adapter implements, with its normalized prompt, result and
 * stream parts. Endpoints speak only these types; adapters translate to and from the vendor.
 */
import type { CallSignal } from "./call-signal.ts";
import type { TokenUsage } from "./usage.ts";
import type { CallWarning } from "./warning.ts";

export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image"; url: string; detail?: string };

export interface ChatToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, exactly as the model produced it. */
  arguments: string;
}

export type ChatMessage =
  | { role: "system" | "developer"; content: string | ChatContentPart[]; name?: string }
  | { role: "user"; content: string | ChatContentPart[]; name?: string }
  | {
      role: "assistant";
      content: string | ChatContentPart[] | null;
      name?: string;
      toolCalls?: ChatToolCall[];
      reasoning?: string;
    }
  | { role: "tool"; content: string | ChatContentPart[]; toolCallId: string };

export interface ChatTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
}

export type ChatToolChoice = "auto" | "none" | "required" | { name: string };

export type ChatResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean };

/** A sampling setting, by its OpenAI name. */
export type SamplingSetting =
  | "temperature"
  | "top_p"
  | "presence_penalty"
  | "frequency_penalty"
  | "logprobs";

/** Request rules of one model that its vendor enforces (from the catalog's capabilities). */
export interface ChatModelRules {
  /**
   * The OpenAI-protocol field the output cap goes in: OpenAI's reasoning models refuse
   * `max_tokens` and take `max_completion_tokens`. `max_tokens` when absent.
   */
  outputCapField?: "max_tokens" | "max_completion_tokens";
  /**
   * Settings the model takes only at their default (temperature and top_p 1, penalties 0, no
   * logprobs): adapters drop other values, with a warning, instead of sending them.
   */
  fixedSampling?: readonly SamplingSetting[];
  /**
   * The most output tokens the model produces for one request (its vendor refuses more): an
   * adapter that adds to the cap (Anthropic's thinking budget) keeps the sum within it.
   */
  outputLimit?: number;
}

export interface ChatCallOptions {
  /** The vendor's model name for this route. */
  upstreamModel: string;
  messages: ChatMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  tools?: ChatTool[];
  toolChoice?: ChatToolChoice;
  responseFormat?: ChatResponseFormat;
  user?: string;
  /** How many choices to generate (`n`); absent means one. */
  choiceCount?: number;
  modelRules?: ChatModelRules;
  /** Fields the client sent that the gateway does not model; OpenAI-compatible routes forward them. */
  extraBody?: Record<string, unknown>;
  /** Headers to forward unchanged to the vendor (for example `anthropic-beta`). */
  forwardHeaders?: Record<string, string>;
  abortSignal?: CallSignal;
}

export type ChatFinishReason =
  | "stop"
  | "length"
  | "tool_calls"
  | "content_filter"
  | "error"
  | "other";

/** One generated choice. */
export interface ChatChoice {
  text: string | null;
  reasoning?: string;
  toolCalls: ChatToolCall[];
  finishReason: ChatFinishReason;
}

/** The first choice in its own fields; every choice in `choices` when more were asked for. */
export interface ChatResult extends ChatChoice {
  id?: string;
  /** Every choice, in order, when the call asked for more than one (`choiceCount`). */
  choices?: ChatChoice[];
  /** Absent when the upstream reported no usage; the gateway then counts it itself. */
  usage: TokenUsage | undefined;
  upstreamRequestId?: string;
  warnings: CallWarning[];
}

/**
 * Normalized stream events. Only the HTTP layer turns them into SSE text. `choice` is the index
 * of the choice a delta belongs to when more than one was asked for (absent: the first).
 */
export type ChatStreamPart =
  | { type: "stream-start"; warnings: CallWarning[]; upstreamRequestId?: string; id?: string }
  | { type: "text-delta"; delta: string; choice?: number }
  | { type: "reasoning-delta"; delta: string; choice?: number }
  | { type: "tool-call-start"; index: number; id: string; name: string; choice?: number }
  | { type: "tool-call-delta"; index: number; argumentsDelta: string; choice?: number }
  | {
      type: "finish";
      /** The first choice's reason. */
      finishReason: ChatFinishReason;
      /** Every choice's reason, in order, when more than one was asked for. */
      finishReasons?: ChatFinishReason[];
      usage: TokenUsage | undefined;
    };

/** How chunks passed through to a client of the upstream's own protocol are renamed. */
export interface ChunkRewrite {
  /** The completion id the client sees. */
  id: string;
  /** The model name the client asked for. */
  model: string;
  /** Keep `"usage":null` in every chunk (the client asked for a usage chunk). */
  usageNulls: boolean;
}

/**
 * A stream passed through: each chunk's JSON text as the client receives it, the chunks of one
 * upstream read together (in order, never empty), then the finish with the usage the upstream
 * reported (no usage-only chunk: the gateway writes its own).
 */
export type ChatChunkStreamPart =
  | { type: "chunks"; json: string[] }
  | Extract<ChatStreamPart, { type: "finish" }>;

export interface ChatModel {
  readonly specificationVersion: "switchyard-chat-1";
  /** Adapter name, e.g. `openai-compatible`. */
  readonly provider: string;
  doGenerate(options: ChatCallOptions): Promise<ChatResult>;
  /** Resolves once the upstream has answered with a success status; errors before that reject. */
  doStream(options: ChatCallOptions): Promise<AsyncIterable<ChatStreamPart>>;
  /**
   * The upstream's OpenAI chat chunks as it wrote them, renamed, for a client that speaks the
   * same protocol: no parse and no serialization per chunk. Only adapters whose upstream speaks
   * OpenAI chat have it.
   */
  doStreamChunks?(
    options: ChatCallOptions,
    rewrite: ChunkRewrite,
  ): Promise<AsyncIterable<ChatChunkStreamPart>>;
}

/**
 * The chat options carried in `extraBody` and sent as they are to OpenAI-compatible vendors:
 * OpenAI's own, and those OpenAI-compatible vendors add (`top_k`, `thinking`, DashScope's
 * `enable_thinking`). Each is free or billed within the reported token usage; the chat endpoint
 * decides which values a client may send (docs/request-fields.md).
 */
export const CHAT_EXTRA_FIELDS: ReadonlySet<string> = new Set([
  "parallel_tool_calls",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  "metadata",
  "store",
  "reasoning_effort",
  "verbosity",
  "prediction",
  "prompt_cache_key",
  "safety_identifier",
  "service_tier",
  "modalities",
  "top_k",
  "thinking",
  "enable_thinking",
]);
