/**
 * @module mcp/tools
 * Every tool the MCP endpoint offers, in the order `tools/list` shows them.
 */
import type { McpTool } from "../tool.ts";
import { balanceTool, listModelsTool, quoteTool, usageTool } from "./account-tools.ts";
import { chatTool, embeddingsTool } from "./chat-tools.ts";
import { editImageTool, generateImageTool, speechTool } from "./media-tools.ts";
import { generateVideoTool, getVideoTaskTool } from "./video-tools.ts";

export const TOOLS: McpTool[] = [
  listModelsTool,
  chatTool,
  generateImageTool,
  editImageTool,
  generateVideoTool,
  getVideoTaskTool,
  embeddingsTool,
  speechTool,
  balanceTool,
  usageTool,
  quoteTool,
];
