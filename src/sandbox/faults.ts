/**
 * @module sandbox/faults
 * The fault-injection language (pure): where a fault spec comes from (the `x-sandbox-fault`
 * header, else the last `[[sandbox:…]]` directive in the message texts), how it parses, and the
 * upper bound of every value (a value out of range is refused like a typo, never clamped).
 *
 * Syntax: semicolon-separated items, each `key=value` or a bare flag, e.g.
 * `status=429;retry-after=1`, `delay=200;chunk-delay=50`, `drop=3`, `hang`, `no-usage;words=5`,
 * `code=DataInspectionFailed`.
 *
 * Directives are found by a linear scan (`indexOf`, no regular expression) over at most
 * {@link DIRECTIVE_SCAN_CHARS} characters of text, so no prompt can make the search slow.
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
  /**
   * Structured output drifts from its schema (a `json_schema` answer or a tool call's
   * arguments lack their first required property), as a model without constrained decoding can.
   */
  offSchema?: boolean;
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
  /** Video tasks: run this many seconds in all, PENDING then RUNNING (decimals allowed). */
  videoSeconds?: number;
  /** Video tasks: end FAILED with this vendor code instead of succeeding. */
  videoFail?: string;
  /** Video tasks: the output is blocked by moderation, in each vendor's way of saying so. */
  videoModerated?: boolean;
  /** Video tasks: never finish (RUNNING until the task expires). */
  videoStuck?: boolean;
  /** Video tasks: the first n polls of the task answer 429. */
  videoThrottle?: number;
}

export type FaultParseResult = { ok: true; fault: FaultSpec } | { ok: false; message: string };

export interface FaultSource {
  spec: string;
  origin: "header" | "directive";
}

const OPEN = "[[sandbox:";
const CLOSE = "]]";

/** Characters of text searched for directives (over all texts of a request); the rest is not. */
export const DIRECTIVE_SCAN_CHARS = 4 * 1024 * 1024;
/** Longest fault spec (header or directive) the sandbox reads. */
export const MAX_SPEC_LENGTH = 512;
/** Largest `retry-after`, in seconds. */
export const MAX_RETRY_AFTER_SECONDS = 3600;
/** Longest `code`. */
export const MAX_CODE_LENGTH = 64;
/** Longest `video-seconds`: one hour. */
export const MAX_VIDEO_SECONDS = 3600;

/** Each integer fault: the field it sets and its largest value (the smallest is 0). */
export const INTEGER_FAULTS = {
  delay: { field: "delayMs", max: 600_000 },
  "chunk-delay": { field: "chunkDelayMs", max: 60_000 },
  drop: { field: "dropAfter", max: 1_000_000 },
  malformed: { field: "malformedAfter", max: 1_000_000 },
  words: { field: "words", max: 1_000_000 },
  "fail-times": { field: "failTimes", max: 1_000 },
  "cached-tokens": { field: "cachedTokens", max: 10_000_000 },
  "cache-write-tokens": { field: "cacheWriteTokens", max: 10_000_000 },
  reasoning: { field: "reasoningWords", max: 1_000_000 },
  "video-throttle": { field: "videoThrottle", max: 1_000 },
} as const;

const FLAG_KEYS = {
  hang: "hang",
  "no-usage": "noUsage",
  "off-schema": "offSchema",
  "video-moderated": "videoModerated",
  "video-stuck": "videoStuck",
} as const;

function isKeyOf<T extends object>(table: T, key: string): key is Extract<keyof T, string> {
  return Object.hasOwn(table, key);
}

/** A directive's place in one text: the spec runs from `start` to `end`. */
interface DirectiveSpan {
  text: string;
  open: number;
  start: number;
  end: number;
}

/**
 * Calls `visit` for each `[[sandbox:…]]` in `text[0, limit)`, in order. The spec holds no `]`;
 * an opening with no `]]` after it is plain text. Each character is looked at a bounded number
 * of times: a failed opening resumes the search after the `]` that ended it.
 */
function eachDirective(text: string, limit: number, visit: (span: DirectiveSpan) => void): void {
  let from = 0;
  for (;;) {
    const open = text.indexOf(OPEN, from);
    if (open === -1 || open + OPEN.length > limit) return;
    const start = open + OPEN.length;
    const bracket = text.indexOf("]", start);
    if (bracket === -1 || bracket + CLOSE.length > limit) return;
    if (text.startsWith(CLOSE, bracket)) {
      visit({ text, open, start, end: bracket });
      from = bracket + CLOSE.length;
    } else {
      from = bracket + 1;
    }
  }
}

/** The spec of the last `[[sandbox:…]]` directive found in the texts, if any. */
export function findFaultDirective(texts: readonly string[]): string | undefined {
  let last: DirectiveSpan | undefined;
  let budget = DIRECTIVE_SCAN_CHARS;
  for (const text of texts) {
    if (budget <= 0) break;
    eachDirective(text, Math.min(text.length, budget), (span) => {
      last = span;
    });
    budget -= text.length;
  }
  return last?.text.slice(last.start, last.end).trim();
}

/** The text with each directive (within the scan limit) replaced by a space. */
export function stripDirectives(text: string): string {
  let out = "";
  let kept = 0;
  eachDirective(text, Math.min(text.length, DIRECTIVE_SCAN_CHARS), (span) => {
    out += `${text.slice(kept, span.open)} `;
    kept = span.end + CLOSE.length;
  });
  return kept === 0 ? text : out + text.slice(kept);
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
  if (spec.length > MAX_SPEC_LENGTH) {
    return { ok: false, message: `fault spec is longer than ${MAX_SPEC_LENGTH} characters` };
  }
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
      if (value.length > MAX_CODE_LENGTH || !/^[A-Za-z][\w.]*$/.test(value)) {
        return { ok: false, message: `fault code must be a vendor error code, got '${value}'` };
      }
      fault.code = value;
    } else if (key === "video-fail") {
      if (value.length > MAX_CODE_LENGTH || !/^[A-Za-z][\w.]*$/.test(value)) {
        return {
          ok: false,
          message: `fault video-fail must be a vendor error code, got '${value}'`,
        };
      }
      fault.videoFail = value;
    } else if (key === "video-seconds") {
      if (!/^\d{1,4}(\.\d{1,3})?$/.test(value) || Number(value) > MAX_VIDEO_SECONDS) {
        return {
          ok: false,
          message: `fault video-seconds must be a number of seconds 0-${MAX_VIDEO_SECONDS}`,
        };
      }
      fault.videoSeconds = Number(value);
    } else if (key === "retry-after") {
      if (!/^\d+(\.\d+)?$/.test(value) || Number(value) > MAX_RETRY_AFTER_SECONDS) {
        return {
          ok: false,
          message: `fault retry-after must be a number of seconds 0-${MAX_RETRY_AFTER_SECONDS}`,
        };
      }
      fault.retryAfter = value;
    } else if (isKeyOf(INTEGER_FAULTS, key)) {
      const { field, max } = INTEGER_FAULTS[key];
      if (!/^\d+$/.test(value) || Number(value) > max) {
        return { ok: false, message: `fault '${key}' must be an integer 0-${max}` };
      }
      fault[field] = Number(value);
    } else {
      return { ok: false, message: `unknown sandbox fault '${key}'` };
    }
  }
  return { ok: true, fault };
}
