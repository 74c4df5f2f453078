/**
 * @module sandbox/anthropic-test-kit
 * Helpers shared by the Anthropic sandbox tests: posting Messages requests with Anthropic's
 * headers and splitting a named-event SSE body. Used only by `*.test.ts` files.
 */

export const MESSAGES_PATH = "/anthropic/v1/messages";
export const ANTHROPIC_HEADERS = {
  "x-api-key": "sk-ant-test",
  "anthropic-version": "2023-06-01",
  "content-type": "application/json",
};

export function messagesBody(
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    model: "claude-haiku-4-5",
    max_tokens: 1024,
    messages: [{ role: "user", content: text }],
    ...extra,
  };
}

export function postMessages(
  baseUrl: string,
  body: unknown,
  options: { headers?: Record<string, string>; path?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${baseUrl}${options.path ?? MESSAGES_PATH}`, {
    method: "POST",
    headers: { ...ANTHROPIC_HEADERS, ...options.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

export interface NamedEvent {
  event: string;
  /** The raw `data:` text. */
  data: string;
}

/** The complete `event:`/`data:` frames of an SSE body, in order. */
export function namedEvents(text: string): NamedEvent[] {
  return text
    .split("\n\n")
    .slice(0, -1)
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? "";
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? "";
      return { event, data };
    });
}
