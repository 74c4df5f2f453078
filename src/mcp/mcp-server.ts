/**
 * @module mcp/mcp-server
 * One MCP server (the SDK's low-level `Server`) per session: tools, resources and prompts over
 * the gateway. Tool schemas are the TypeBox schemas themselves, arguments are checked by the
 * gateway's validator, and every handler acts as the caller of the HTTP request that carried it
 * (`authInfo`), never as anyone the arguments name.
 */

import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { TObject } from "@sinclair/typebox";
import type { KeyCaller, ModelCallRunner } from "../core/model-call-runner.ts";
import type { ModelEndpointSet } from "../core/model-endpoints.ts";
import type { Services } from "../core/services.ts";
import { compileValidator } from "../core/validate.ts";
import { GatewayError } from "../errors/index.ts";
import { plainSchema, type RouteDoc } from "../http/openapi.ts";
import { newId } from "../store/index.ts";
import type { ImageReadGate } from "./image-read-gate.ts";
import { PROMPTS } from "./prompts.ts";
import { listResources, RESOURCE_TEMPLATES, readResource } from "./resources.ts";
import { errorResult, type McpTool, type ToolResult } from "./tool.ts";
import { TOOLS } from "./tools/index.ts";

export const SERVER_INFO = { name: "switchyard", title: "Switchyard AI gateway", version: "1.0.0" };

const INSTRUCTIONS = [
  "Switchyard serves chat, image, video, embedding and speech models behind one key, billed from a prepaid balance.",
  "Money is in integer micro-USD (1,000,000 µUSD = 1 USD). Every billable tool result states cost_micros.",
  "Pick models with list_models or the switchyard://catalog resource; call quote before expensive requests and get_balance to check funds.",
  "Video is a task: generate_video returns it (or waits with wait: true); get_video_task reads it later. A failed task costs nothing.",
  "A refused call is an isError result with the HTTP API's status, code and message.",
].join("\n");

/** What the transport puts in `authInfo.extra` for the handlers. */
export interface CallerInfo {
  caller: KeyCaller;
  /**
   * Aborted when the HTTP request that carried the call closes before its answer was written
   * (the client dropped the connection): the call stops as a cancelled one does, charged
   * nothing, and its quota slot is free at once.
   */
  dropped?: AbortSignal;
}

export interface McpDependencies {
  services: Services;
  runner: ModelCallRunner;
  endpoints: ModelEndpointSet;
  imageReads: ImageReadGate;
  routeDocs: readonly RouteDoc[];
}

/** The tools with their schemas as JSON Schema and compiled validators, built once. */
const PREPARED = TOOLS.map((tool) => ({
  tool,
  validate: compileValidator(tool.input as TObject),
  listing: {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: plainSchema(tool.input),
    outputSchema: plainSchema(tool.output),
    annotations: { title: tool.title, ...tool.annotations },
  },
}));

function callerOf(authInfo: AuthInfo | undefined): KeyCaller {
  const caller = (authInfo?.extra as CallerInfo | undefined)?.caller;
  // The transport authenticates every request before the server sees it.
  if (!caller) throw new McpError(ErrorCode.InvalidRequest, "Not authenticated.");
  return caller;
}

async function callTool(
  deps: McpDependencies,
  entry: (typeof PREPARED)[number],
  args: unknown,
  extra: {
    authInfo?: AuthInfo;
    signal: AbortSignal;
    _meta?: { progressToken?: string | number };
    sendNotification: Server["notification"];
  },
): Promise<ToolResult> {
  const caller = callerOf(extra.authInfo);
  const dropped = (extra.authInfo?.extra as CallerInfo | undefined)?.dropped;
  const signal = dropped ? AbortSignal.any([extra.signal, dropped]) : extra.signal;
  const requestId = newId("req");
  const token = extra._meta?.progressToken;
  try {
    const validated = entry.validate(args ?? {});
    return await (entry.tool as McpTool).run(validated, {
      ...deps,
      caller,
      requestId,
      signal,
      async progress(progress, total, message) {
        if (token === undefined) return;
        await extra
          .sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress, total, message },
          })
          .catch(() => undefined);
      },
    });
  } catch (error) {
    if (!GatewayError.isInstance(error))
      deps.services.logger.warn(
        { err: error, requestId, tool: entry.tool.name },
        "MCP tool failed",
      );
    return errorResult(error, requestId);
  }
}

export function createMcpServer(deps: McpDependencies): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions: INSTRUCTIONS,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: PREPARED.map((entry) => entry.listing),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const entry = PREPARED.find((candidate) => candidate.tool.name === request.params.name);
    if (!entry) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool '${request.params.name.slice(0, 100)}'.`,
      );
    }
    return callTool(deps, entry, request.params.arguments, {
      authInfo: extra.authInfo,
      signal: extra.signal,
      _meta: extra._meta,
      sendNotification: (notification) => extra.sendNotification(notification as never),
    });
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: listResources(deps.routeDocs),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const caller = callerOf(extra.authInfo);
    try {
      return await readResource(
        { services: deps.services, caller },
        deps.routeDocs,
        request.params.uri,
      );
    } catch (error) {
      if (GatewayError.isInstance(error) && error.code === "not_found") {
        throw new McpError(-32002, error.message, { uri: request.params.uri });
      }
      throw error;
    }
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: PROMPTS.map(({ name, title, description, arguments: args }) => ({
      name,
      title,
      description,
      arguments: args,
    })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const prompt = PROMPTS.find((candidate) => candidate.name === request.params.name);
    if (!prompt)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown prompt '${request.params.name.slice(0, 100)}'.`,
      );
    const args = request.params.arguments ?? {};
    const missing = prompt.arguments.find((arg) => arg.required && !args[arg.name]);
    if (missing) throw new McpError(ErrorCode.InvalidParams, `Missing argument '${missing.name}'.`);
    return {
      description: prompt.description,
      messages: [
        { role: "user" as const, content: { type: "text" as const, text: prompt.text(args) } },
      ],
    };
  });
  return server;
}
