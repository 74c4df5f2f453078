/**
 * @module providers/anthropic/anthropic-api
 * The Anthropic Messages API wire types the adapter sends and reads (request body, response,
 * stream events). Only the fields the adapter uses; everything read is treated as optional.
 * @see https://docs.anthropic.com/en/api/messages
 */

export type AnthropicImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string };

export type AnthropicTextBlock = { type: "text"; text: string };
export type AnthropicImageBlock = { type: "image"; source: AnthropicImageSource };

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
    };

export interface AnthropicMessageParam {
  role: "user" | "assistant";
  content: string | AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice =
  | { type: "none" }
  | { type: "auto" | "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean };

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: string;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  thinking?: Record<string, unknown>;
  metadata?: { user_id: string };
  stream?: boolean;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A content block of a response (unknown block types are read and ignored). */
export interface AnthropicResponseBlock {
  type: string;
  text?: string;
  thinking?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export interface AnthropicResponse {
  id?: string;
  content?: AnthropicResponseBlock[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

/** One stream event's `data`; `type` repeats the SSE event name. */
export interface AnthropicStreamEvent {
  type?: string;
  message?: { id?: string; usage?: AnthropicUsage };
  index?: number;
  content_block?: AnthropicResponseBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}
