/**
 * @module providers/gemini/gemini-api-types
 * The slice of the Gemini `generateContent` wire format the adapter writes and reads.
 * @see https://ai.google.dev/api/generate-content
 * @see https://ai.google.dev/api/caching#Content
 */

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiToolConfig {
  functionCallingConfig: {
    mode: "AUTO" | "ANY" | "NONE";
    allowedFunctionNames?: string[];
  };
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

/** A response part as received: every field optional, since upstreams vary. */
export interface GeminiResponsePart {
  text?: string;
  thought?: boolean;
  functionCall?: { name?: unknown; args?: unknown };
}

/** One `GenerateContentResponse`: the whole answer, or one chunk of a stream. */
export interface GeminiResponse {
  candidates?: Array<{
    content?: { role?: string; parts?: GeminiResponsePart[] };
    finishReason?: string;
    index?: number;
  }>;
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Present when a stream reports a failure after its 200 status. */
  error?: { code?: number; message?: string; status?: string };
}
