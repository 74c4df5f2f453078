/**
 * @module sandbox/faults
 * The fault-injection language (pure): where a fault spec comes from (the `x-sandbox-fault`
 * header, else the last `[[sandbox:…]]` directive in the message texts) and how it parses.
 *
 * Syntax: semicolon-separated items, each `key=value` or a bare flag, e.g.
 * `status=429;retry-after=1`, `delay=200;chunk-delay=50`, `drop=3`, `hang`, `no-usage;words=5`,
 * `code=DataInspectionFailed`.
 */

export interface FaultSpec {
  /** Answer with this HTTP error status (400–599) and the vendor's error body. */
  status?: number;
  /** Value of the `retry-after` header sent with an injected error (seconds). */
  retryAfter?: string;
  /** Wait this long before sending the response headers. */
  delayMs?: number;
  /** Wait this long between stream chunks. */
  chunkDelayMs?: number;
  /** Stream: destroy the socket after n data frames. Non-stream: destroy it without a response. */
  dropAfter?: number;
  /** Stream: after n data frames send a frame whose data is not JSON, then end. */
  malformedAfter?: number;
  /** Never answer; keep the connection open until the client goes away. */
  hang: boolean;
  /** Leave usage out (non-stream body and stream usage chunk). */
  noUsage: boolean;
  /** Reply with exactly n words (still capped by max_tokens). */
  words?: number;
  /** Fail only the first n requests sharing a fault key, with `status` (default 503). */
  failTimes?: number;
  /** Report this many prompt tokens as read from the prompt cache (capped at the prompt). */
  cachedTokens?: number;
  /** Report this many prompt tokens as written to the prompt cache (capped at the rest). */
  cacheWriteTokens?: number;
  /** Think aloud first: this many reasoning words, sent as `reasoning_content` and billed. */
  reasoningWords?: number;
  /**
   * Answer with the vendor error of this code (e.g. `DataInspectionFailed`,
   * `moderation_blocked`) and the status the vendor sends with it. Honoured by the image APIs.
   */
  code?: string;
}

export type FaultParseResult = { ok: true; fault: FaultSpec } | { ok: false; message: string };

export interface FaultSource {
  spec: string;
  origin: "header" | "directive";
}

const DIRECTIVE = /\[\[sandbox:([^\]]*)\]\]/g;

const INTEGER_KEYS = {
  delay: "delayMs",
  "chunk-delay": "chunkDelayMs",
  drop: "dropAfter",
  malformed: "malformedAfter",
  words: "words",
  "fail-times": "failTimes",
  "cached-tokens": "cachedTokens",
  "cache-write-tokens": "cacheWriteTokens",
  reasoning: "reasoningWords",
} as const;

const FLAG_KEYS = { hang: "hang", "no-usage": "noUsage" } as const;

function isKeyOf<T extends object>(table: T, key: string): key is Extract<keyof T, string> {
  return Object.hasOwn(table, key);
}

/** The spec of the last `[[sandbox:…]]` directive found in the texts, if any. */
export function findFaultDirective(texts: readonly string[]): string | undefined {
  let found: string | undefined;
  for (const text of texts) {
    for (const match of text.matchAll(DIRECTIVE)) found = match[1]?.trim();
  }
  return found;
}

/** The header wins over directives; an empty header counts as absent. */
export function selectFaultSource(
  header: string | undefined,
  texts: readonly string[],
): FaultSource | undefined {
  const fromHeader = header?.trim();
  if (fromHeader) return { spec: fromHeader, origin: "header" };
  const fromDirective = findFaultDirective(texts);
  return fromDirective ? { spec: fromDirective, origin: "directive" } : undefined;
}

/** Parses a fault spec. Unknown keys and bad values are errors, so typos never pass silently. */
export function parseFaultSpec(spec: string): FaultParseResult {
  const fault: FaultSpec = { hang: false, noUsage: false };
  for (const rawItem of spec.split(";")) {
    const item = rawItem.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    const key = (eq === -1 ? item : item.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? undefined : item.slice(eq + 1).trim();

    if (isKeyOf(FLAG_KEYS, key)) {
      if (value !== undefined && value !== "true") {
        return { ok: false, message: `fault flag '${key}' takes no value` };
      }
      fault[FLAG_KEYS[key]] = true;
      continue;
    }
    if (value === undefined || value === "") {
      return { ok: false, message: `fault '${key}' needs a value` };
    }
    if (key === "status") {
      const status = Number(value);
      if (!Number.isInteger(status) || status < 400 || status > 599) {
        return { ok: false, message: `fault status must be an integer 400-599, got '${value}'` };
      }
      fault.status = status;
    } else if (key === "code") {
      if (!/^[A-Za-z][\w.]*$/.test(value)) {
        return { ok: false, message: `fault code must be a vendor error code, got '${value}'` };
      }
      fault.code = value;
    } else if (key === "retry-after") {
      if (!/^\d+(\.\d+)?$/.test(value)) {
        return { ok: false, message: `fault retry-after must be a number of seconds` };
      }
      fault.retryAfter = value;
    } else if (isKeyOf(INTEGER_KEYS, key)) {
      if (!/^\d+$/.test(value)) {
        return { ok: false, message: `fault '${key}' must be a non-negative integer` };
      }
      fault[INTEGER_KEYS[key]] = Number(value);
    } else {
      return { ok: false, message: `unknown sandbox fault '${key}'` };
    }
  }
  return { ok: true, fault };
}
