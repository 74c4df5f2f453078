/**
 * @module endpoints/chat-completions/chunk-json
 * The JSON text of a translated stream's text chunks, written straight from a template made
 * once per stream: the stream's id, creation time and model name are serialized once, and each
 * delta costs one string escape instead of four objects and a whole `JSON.stringify`. The text
 * is byte for byte what `JSON.stringify` makes of the chunk object (tested).
 */

export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  /** The client asked for a usage chunk: every chunk carries `"usage":null`. */
  includeUsage: boolean;
}

/** Makes the text chunks of one stream: `content` or `reasoning_content` deltas. */
export function textChunkWriter(
  head: ChunkHead,
): (key: "content" | "reasoning_content", text: string, choice: number) => string {
  const before =
    `{"id":${JSON.stringify(head.id)},"object":"chat.completion.chunk","created":` +
    `${JSON.stringify(head.created)},"model":${JSON.stringify(head.model)},"choices":[{"index":`;
  const after = `,"logprobs":null,"finish_reason":null}]${head.includeUsage ? ',"usage":null' : ""}}`;
  return (key, text, choice) =>
    `${before}${choice},"delta":{"${key}":${JSON.stringify(text)}}${after}`;
}
