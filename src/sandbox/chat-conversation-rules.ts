/**
 * @module sandbox/chat-conversation-rules
 * What OpenAI's Chat Completions refuses beyond each message's shape, with its own wording:
 * an unknown role, a message without `content` (an assistant message may leave it out when it
 * calls tools), a `tool` message that answers no call of the assistant turn before it, tool
 * calls left without their answers, more than 4 stop sequences, and sampling values out of
 * range. Pure; `parseChatRequest` asks it once the messages are read.
 */
import type { ChatRequestError, JsonRecord } from "./chat-request.ts";

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const ROLES = ["system", "assistant", "user", "function", "tool", "developer"];
const MAX_STOPS = 4;

const error = (message: string, param: string | null, code: string | null): ChatRequestError => ({
  message,
  param,
  code,
});

function toolCallIds(message: JsonRecord): string[] {
  if (!Array.isArray(message.tool_calls)) return [];
  return message.tool_calls.filter(isRecord).map((call) => String(call.id ?? ""));
}

/** The first conversation rule `messages` (each one a record with a string role) breaks. */
export function conversationError(messages: readonly JsonRecord[]): ChatRequestError | undefined {
  /** Calls of the last assistant turn not yet answered by a `tool` message. */
  let open: string[] = [];
  /** Whether a `tool` message may come now (right after tool calls or their answers). */
  let answering = false;
  for (const [i, message] of messages.entries()) {
    const role = String(message.role);
    if (!ROLES.includes(role)) {
      const supported = `${ROLES.slice(0, -1)
        .map((name) => `'${name}'`)
        .join(", ")}, and '${ROLES.at(-1)}'`;
      return error(
        `Invalid value: '${role}'. Supported values are: ${supported}.`,
        `messages[${i}].role`,
        "invalid_value",
      );
    }
    const callsTools = role === "assistant" && toolCallIds(message).length > 0;
    if (!("content" in message) && !callsTools && role !== "function") {
      return error(
        `Missing required parameter: 'messages[${i}].content'.`,
        `messages[${i}].content`,
        "missing_required_parameter",
      );
    }
    if (role === "tool") {
      if (!answering)
        return error(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
          null,
        );
      open = open.filter((id) => id !== message.tool_call_id);
      continue;
    }
    if (open.length > 0) {
      return error(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(", ")}`,
        "messages",
        null,
      );
    }
    open = callsTools ? toolCallIds(message) : [];
    answering = callsTools;
  }
  return undefined;
}

/** `stop` and the sampling settings against OpenAI's limits. */
export function settingsError(body: JsonRecord): ChatRequestError | undefined {
  if (Array.isArray(body.stop) && body.stop.length > MAX_STOPS) {
    return error(
      `Invalid 'stop': array too long. Expected an array with maximum length ${MAX_STOPS}, but got an array with length ${body.stop.length} instead.`,
      "stop",
      "array_above_max_length",
    );
  }
  const ranges: Array<[string, number, number]> = [
    ["temperature", 0, 2],
    ["top_p", 0, 1],
    ["presence_penalty", -2, 2],
    ["frequency_penalty", -2, 2],
  ];
  for (const [name, low, high] of ranges) {
    const value = body[name];
    if (typeof value !== "number") continue;
    if (value > high)
      return error(
        `Invalid '${name}': decimal above maximum value. Expected a value <= ${high}, but got ${value} instead.`,
        name,
        "decimal_above_max_value",
      );
    if (value < low)
      return error(
        `Invalid '${name}': decimal below minimum value. Expected a value >= ${low}, but got ${value} instead.`,
        name,
        "decimal_below_min_value",
      );
  }
  return undefined;
}
