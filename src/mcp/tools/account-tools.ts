/**
 * @module mcp/tools/account-tools
 * The read-only tools: `list_models`, `get_balance`, `get_usage` and `quote`. Each calls the
 * function its HTTP route calls (`GET /v1/models`, `GET /v1/account/balance`,
 * `GET /v1/account/usage`, `POST /v1/billing/quote`), so both answer the same.
 */
import { Type } from "@sinclair/typebox";
import { unavailableReason } from "../../core/model-availability.ts";
import { quoteRequest } from "../../core/quote.ts";
import { accountBalance, accountUsage } from "../../endpoints/billing/routes.ts";
import { toOpenAIModel } from "../../endpoints/models/route.ts";
import { defineTool, structuredResult } from "../tool.ts";

const KINDS = ["chat", "image-generation", "image-edit", "video", "embedding", "speech"] as const;

export const listModelsTool = defineTool({
  name: "list_models",
  title: "List models",
  description:
    "The models this key may use, with their kind (chat, image-generation, image-edit, video, embedding, speech), capabilities and prices in µUSD. Filter by kind to keep the answer short.",
  input: Type.Object(
    { kind: Type.Optional(Type.Union(KINDS.map((kind) => Type.Literal(kind)))) },
    { additionalProperties: false },
  ),
  output: Type.Object({
    models: Type.Array(
      Type.Object({
        id: Type.String(),
        endpoint: Type.String(),
        available: Type.Boolean(),
      }),
    ),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(args, context) {
    const { services } = context;
    const models = services.catalog
      .listAllowed(context.caller.key.models)
      .filter((model) => args.kind === undefined || model.endpoint === args.kind)
      .map((model) => toOpenAIModel(model, (entry) => unavailableReason(entry, services)));
    return structuredResult({ models });
  },
});

export const balanceTool = defineTool({
  name: "get_balance",
  title: "Get the balance",
  description:
    "The account's prepaid balance, the part held by running requests and what is available, in integer µUSD (1,000,000 µUSD = 1 USD).",
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({
    balance_micros: Type.Integer(),
    held_micros: Type.Integer(),
    available_micros: Type.Integer(),
    currency: Type.String(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_args, context) {
    return structuredResult(await accountBalance(context.services, context.caller.accountId));
  },
});

export const usageTool = defineTool({
  name: "get_usage",
  title: "Get usage",
  description:
    "The account's usage records, newest first (model, tokens, images, seconds, characters, cost in µUSD), or totals grouped by day, model or key.",
  input: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Default 20." })),
      model: Type.Optional(Type.String()),
      from: Type.Optional(Type.String({ description: "ISO 8601 time or Unix seconds." })),
      to: Type.Optional(Type.String({ description: "ISO 8601 time or Unix seconds." })),
      group_by: Type.Optional(
        Type.Union([Type.Literal("day"), Type.Literal("model"), Type.Literal("key")]),
      ),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({ data: Type.Array(Type.Record(Type.String(), Type.Unknown())) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(args, context) {
    const usage = await accountUsage(context.services, context.caller.accountId, {
      ...args,
      limit: String(args.limit ?? 20),
    });
    return structuredResult(usage);
  },
});

export const quoteTool = defineTool({
  name: "quote",
  title: "Quote a request",
  description:
    "The most a request would cost (the amount held while it runs) with the price breakdown, without running it. Give the body of the HTTP request: e.g. {model, messages, max_tokens} for chat, {model, prompt, size, n} for images, {model, duration, resolution, ...} for video.",
  input: Type.Object(
    {
      request: Type.Object(
        { model: Type.String() },
        { additionalProperties: true, description: "The request body, with its model." },
      ),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({
    model: Type.String(),
    endpoint: Type.String(),
    max_cost_micros: Type.Integer(),
    line_items: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(args, context) {
    const quote = await quoteRequest(
      context.services,
      context.endpoints,
      context.caller.key,
      args.request,
    );
    return structuredResult({ ...quote });
  },
});
