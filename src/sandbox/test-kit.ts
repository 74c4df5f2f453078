/**
 * @module sandbox/test-kit
 * Helpers shared by the sandbox's own tests: posting chat requests, reading a possibly cut SSE
 * body, and polling for a condition. Used only by `*.test.ts` files.
 */

export const CHAT_PATH = "/openai/v1/chat/completions";
export const AUTH_HEADERS = { authorization: "Bearer sk-test", "content-type": "application/json" };

export interface ChatBody {
  model: string;
  messages: unknown[];
  [key: string]: unknown;
}

export function chatBody(text: string, extra: Record<string, unknown> = {}): ChatBody {
  return { model: "gpt-4o-mini", messages: [{ role: "user", content: text }], ...extra };
}

export function postChat(
  baseUrl: string,
  body: unknown,
  options: { headers?: Record<string, string>; path?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${baseUrl}${options.path ?? CHAT_PATH}`, {
    method: "POST",
    headers: { ...AUTH_HEADERS, ...options.headers },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** Reads the whole body; a cut connection ends the read with `error` set instead of throwing. */
export async function readAll(response: Response): Promise<{ text: string; error: unknown }> {
  const reader = response.body?.getReader();
  if (!reader) return { text: "", error: undefined };
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: text + decoder.decode(), error: undefined };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

/** The `data:` payloads of complete SSE events, in order. */
export function dataFrames(text: string): string[] {
  return text
    .split("\n\n")
    .slice(0, -1)
    .map((event) => event.replace(/^data: /, ""));
}

/** Polls until `check` returns true, or throws after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 3000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => word !== "").length;
}
