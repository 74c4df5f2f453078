/**
 * @module console/api
 * Every call the console makes. Account and admin calls ride on the HttpOnly session cookie,
 * sent only with `credentials: "same-origin"` and counted only with `x-switchyard-console: 1`
 * (a header another site's form or image cannot send). Model calls from the playground carry
 * the user's own `sk-` key instead and never the cookie.
 */
import type { List } from "./types.ts";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called when an account call answers 401: the session is gone. */
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | undefined | null>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function errorOf(response: Response): Promise<ApiError> {
  let code = `http_${response.status}`;
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = body.error.message;
    if (body.error?.code) code = body.error.code;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, code, message);
}

/** A console call (session cookie); throws `ApiError` on any status but 2xx. */
export interface ConsoleInit {
  method?: string;
  json?: unknown;
  query?: Query;
  /** An `Idempotency-Key` for a call that must not act twice when it is sent again. */
  idempotencyKey?: string;
}

export async function consoleFetch(path: string, init: ConsoleInit = {}): Promise<Response> {
  const headers: Record<string, string> = { "x-switchyard-console": "1" };
  if (init.idempotencyKey !== undefined) headers["idempotency-key"] = init.idempotencyKey;
  if (init.json !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(withQuery(path, init.query), {
    method: init.method ?? (init.json !== undefined ? "POST" : "GET"),
    credentials: "same-origin",
    headers,
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && !path.startsWith("/v1/account/login")) onUnauthorized();
    throw error;
  }
  return response;
}

export async function api<T>(path: string, init: ConsoleInit = {}): Promise<T> {
  const response = await consoleFetch(path, init);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Most pages `apiAll` follows: 1,000 items a page, so 20,000 items. */
const ALL_PAGES_MAX = 20;

/**
 * Every page of a cursor-paged list, for lists a page shows whole (an account's keys): a list
 * read only to its first page hides what was made last.
 */
export async function apiAll<T>(path: string, query: Query = {}): Promise<List<T>> {
  const data: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < ALL_PAGES_MAX; page++) {
    const list = await api<List<T>>(path, { query: { ...query, limit: 1000, cursor } });
    data.push(...list.data);
    if (!list.has_more || !list.next_cursor) return { object: "list", data };
    cursor = list.next_cursor;
  }
  return { object: "list", data, has_more: true };
}

/** A model call with the user's key; the response is returned as is (the caller reads it). */
export async function modelCall(path: string, key: string, body: unknown): Promise<Response> {
  const response = await fetch(path, {
    method: "POST",
    credentials: "omit",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** Saves text as a file through a temporary blob link. */
export function download(name: string, text: string, type = "text/csv"): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** CSV of rows, quoting every field that needs it and defusing formula-like texts. */
export function toCsv(columns: string[], rows: unknown[][]): string {
  const cell = (value: unknown) => {
    let text = value === null || value === undefined ? "" : String(value);
    // A text a spreadsheet would evaluate as a formula gets a leading apostrophe.
    if (typeof value !== "number" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return `${[columns, ...rows].map((row) => row.map(cell).join(",")).join("\n")}\n`;
}
