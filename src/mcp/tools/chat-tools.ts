/**
 * @module mcp/tools/chat-tools
 * `chat` and `create_embeddings`: the chat completions and embeddings endpoints as tools, run by
 * the same core as HTTP (same validation, quotas, hold, settlement, usage record and errors).
 */
import { Type } from "@sinclair/typebox";
import { defineTool, runEndpoint, structuredResult, withAnswerMeta } from "../tool.ts";

const Usage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Optional(Type.Integer()),
  total_tokens: Type.Integer(),
});

interface ChatCompletion {
  model: string;
  choices: { message: { content: string | null; tool_calls?: unknown[] }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export const chatTool = defineTool({
  name: "chat",
  title: "Chat with a model",
  description:
    "Send messages to a chat model (ids from list_models or switchyard://catalog) and get its reply. Billed per token from the key's prepaid balance (µUSD); the result states the cost. Use quote first for large prompts.",
  input: Type.Object(
    {
      model: Type.String({ description: "A chat model id, e.g. gpt-4o-mini." }),
      messages: Type.Array(
        Type.Object(
          {
            role: Type.Union([
              Type.Literal("system"),
              Type.Literal("user"),
              Type.Literal("assistant"),
            ]),
            content: Type.String(),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, description: "The conversation so far, oldest first." },
      ),
      max_tokens: Type.Optional(
        Type.Integer({ minimum: 1, description: "Most output tokens (caps the cost)." }),
      ),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({
    model: Type.String(),
    content: Type.Union([Type.String(), Type.Null()]),
    finish_reason: Type.String(),
    usage: Usage,
    cost_micros: Type.Integer({ description: "What the call was charged, in µUSD." }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, context) {
    const answer = await runEndpoint(context, "/v1/chat/completions", { ...args, stream: false });
    const completion = answer.body as ChatCompletion;
    const choice = completion.choices[0];
    const content = choice?.message.content ?? null;
    return withAnswerMeta(
      structuredResult(
        {
          model: completion.model,
          content,
          finish_reason: choice?.finish_reason ?? "stop",
          usage: completion.usage,
          cost_micros: answer.costMicros,
          ...(answer.warnings.length ? { warnings: answer.warnings } : {}),
        },
        content ? [{ type: "text", text: content }] : [],
      ),
      answer,
    );
  },
});

/** More inputs than this make a result too large for an agent's context. */
const MAX_TOOL_INPUTS = 64;

export const embeddingsTool = defineTool({
  name: "create_embeddings",
  title: "Create embeddings",
  description: `Turn up to ${MAX_TOOL_INPUTS} texts into embedding vectors with an embedding model. Billed per input token. Vectors are returned in structured content, in input order.`,
  input: Type.Object(
    {
      model: Type.String({ description: "An embedding model id, e.g. text-embedding-v4." }),
      input: Type.Union([
        Type.String({ minLength: 1 }),
        Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_TOOL_INPUTS }),
      ]),
      dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({
    model: Type.String(),
    dimensions: Type.Integer(),
    embeddings: Type.Array(Type.Array(Type.Number())),
    usage: Usage,
    cost_micros: Type.Integer(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, context) {
    const answer = await runEndpoint(context, "/v1/embeddings", {
      ...args,
      encoding_format: "float",
    });
    const list = answer.body as {
      model: string;
      data: { embedding: number[] }[];
      usage: { prompt_tokens: number; total_tokens: number };
    };
    const embeddings = list.data.map((item) => item.embedding);
    return withAnswerMeta(
      {
        content: [
          {
            type: "text",
            text: `${embeddings.length} vector(s) of ${embeddings[0]?.length ?? 0} dimensions from ${list.model}; cost ${answer.costMicros} µUSD. The vectors are in the structured content.`,
          },
        ],
        structuredContent: {
          model: list.model,
          dimensions: embeddings[0]?.length ?? 0,
          embeddings,
          usage: list.usage,
          cost_micros: answer.costMicros,
        },
      },
      answer,
    );
  },
});
