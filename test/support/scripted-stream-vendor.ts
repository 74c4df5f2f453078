/**
 * @module test/support/scripted-stream-vendor
 * A vendor whose streams a test scripts: each request runs the script named by a `mode:<name>`
 * marker in its messages, writing OpenAI chunks or Anthropic events as the script says; and the
 * catalog entry of a chat model routed to it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export type StreamScript = (
  body: { model: string },
  response: ServerResponse,
) => Promise<void> | void;

/** An OpenAI chunk written compactly (as OpenAI does), id and model first. */
export const oaChunk = (model: string, choices: unknown[], extra = "") =>
  `data: {"id":"chatcmpl-VENDORID","object":"chat.completion.chunk","created":1,"model":"${model}","choices":${JSON.stringify(choices)}${extra}}\n\n`;

export const anthropicEvent = (name: string, data: object) =>
  `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

/** Anthropic's `message_start`, its usage with the placeholder output count of 1. */
export const messageStart = (model: string) =>
  anthropicEvent("message_start", {
    message: {
      id: "msg_vendor",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  });

export function startScriptedVendor(scripts: Record<string, StreamScript>): Promise<Server> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => {
      raw += chunk.toString();
    });
    request.on("end", () => {
      const body = JSON.parse(raw) as { model: string; messages: unknown };
      const mode = /mode:([a-z-]+)/.exec(JSON.stringify(body.messages))?.[1] ?? "";
      response.writeHead(200, { "content-type": "text/event-stream" });
      void scripts[mode]?.(body, response);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** A chat model `id` whose one route is the scripted vendor at `base` through `adapter`. */
export function scriptedChatModel(
  id: string,
  adapter: string,
  base: string,
  capabilities: Record<string, unknown> = {},
) {
  return {
    id,
    endpoint: "chat",
    family: "test",
    display_name: id,
    owned_by: "switchyard",
    capabilities: {
      max_output_tokens: 1_000,
      streaming: true,
      reasoning: true,
      tools: true,
      ...capabilities,
    },
    pricing: { per_1m_tokens: { input: 1_000_000, output: 2_000_000 } },
    routes: [
      { vendor: `rv-${id}`, adapter, base_url: base, upstream_model: `${id}-secret-upstream` },
    ],
  };
}

/** A text block at `index`: its start (empty), one delta per word, its stop. */
export const anthropicTextBlock = (words: string[], index = 0) =>
  [
    anthropicEvent("content_block_start", { index, content_block: { type: "text", text: "" } }),
    ...words.map((word) =>
      anthropicEvent("content_block_delta", {
        index,
        delta: { type: "text_delta", text: `${word} ` },
      }),
    ),
    anthropicEvent("content_block_stop", { index }),
  ].join("");
