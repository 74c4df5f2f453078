/**
 * @module mcp/tool
 * What an MCP tool is here: a name, a description a model can act on, TypeBox input and output
 * schemas (given to clients verbatim as JSON Schema, validated by the gateway's own validator so
 * messages match the HTTP API's), annotations, and a function of the validated arguments. Also
 * the result shapes every tool shares: structured content mirrored as text, and failures as
 * `isError` results carrying the HTTP API's status, code and message.
 */
import type { Static, TObject } from "@sinclair/typebox";
import type { KeyCaller, ModelCallRunner } from "../core/model-call-runner.ts";
import type { ModelEndpointSet } from "../core/model-endpoints.ts";
import type { Services } from "../core/services.ts";
import { toGatewayError } from "../http/error-renderer.ts";
import type { ImageReadGate } from "./image-read-gate.ts";

/** One MCP content block (the subset the gateway's tools send). */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string };

export interface ToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * What the HTTP API sends in headers, as result metadata: `switchyard/sandbox` when the sandbox
 * (not a vendor) answered (`x-switchyard-sandbox`), `switchyard/warnings` for settings that were
 * changed or dropped (`x-switchyard-warnings`).
 */
export function withAnswerMeta(
  result: ToolResult,
  answer: { sandbox: boolean; warnings: readonly string[] },
): ToolResult {
  const meta: Record<string, unknown> = {};
  if (answer.sandbox) meta["switchyard/sandbox"] = true;
  if (answer.warnings.length > 0) meta["switchyard/warnings"] = answer.warnings;
  return Object.keys(meta).length > 0 ? { ...result, _meta: meta } : result;
}

/** What a tool call runs with: the caller of this HTTP request, never one from the arguments. */
export interface ToolContext {
  services: Services;
  runner: ModelCallRunner;
  endpoints: ModelEndpointSet;
  /** Bounds `edit_image`'s reads per account (shared by every session). */
  imageReads: ImageReadGate;
  caller: KeyCaller;
  requestId: string;
  signal: AbortSignal;
  /** Sends a progress notification when the client asked for them (else does nothing). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
}

export interface McpTool<I extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: TObject;
  annotations: {
    readOnlyHint: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint: boolean;
  };
  run(args: Static<I>, context: ToolContext): Promise<ToolResult>;
}

/** Runs a model endpoint's request as the tool's caller, through the same core as HTTP. */
export function runEndpoint(context: ToolContext, path: string, body: unknown) {
  return context.runner.run(path, {
    caller: context.caller,
    requestId: context.requestId,
    signal: context.signal,
    body,
  });
}

/** Declares a tool with its argument type inferred from its input schema. */
export function defineTool<I extends TObject>(tool: McpTool<I>): McpTool {
  return tool as unknown as McpTool;
}

/** A successful result: the structured content, mirrored as JSON text, after other blocks. */
export function structuredResult(
  structured: Record<string, unknown>,
  blocks: ContentBlock[] = [],
): ToolResult {
  return {
    content: [...blocks, { type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}

/**
 * A failure as the HTTP API would answer it: `isError`, the text `<status> <code>: <message>`
 * and the same error object in JSON, so an agent can read and act on it.
 */
export function errorResult(error: unknown, requestId: string): ToolResult {
  const failure = toGatewayError(error, requestId);
  const body = {
    error: {
      status: failure.status,
      code: failure.providerCode ?? failure.code,
      type: failure.type,
      message: failure.message,
      ...(failure.param !== undefined ? { param: failure.param } : {}),
      request_id: requestId,
    },
  };
  return {
    content: [
      { type: "text", text: `${failure.status} ${body.error.code}: ${failure.message}` },
      { type: "text", text: JSON.stringify(body) },
    ],
    isError: true,
  };
}
