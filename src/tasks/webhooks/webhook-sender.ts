/**
 * @module tasks/webhooks/webhook-sender
 * One webhook delivery attempt: checks the URL again (the host may resolve elsewhere since
 * submission), connects only to the addresses just checked (a lookup pinned to them, the Host
 * header and TLS server name still the URL's host), POSTs the signed body, and reports the
 * outcome. A 2xx answer is success; anything else, a 3xx included (redirects are never
 * followed), a refused address, a connection error or the timeout is a failure for the retry
 * schedule (`webhook-schedule.ts`). At most 64 KiB of the answer is read, then discarded.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import type { WebhookAttempt } from "./webhook-schedule.ts";
import { SIGNATURE_HEADER, signWebhook } from "./webhook-signature.ts";
import {
  checkWebhookUrl,
  type ResolvedAddress,
  type WebhookAddressPolicy,
  type WebhookResolver,
  WebhookUrlError,
} from "./webhook-url-guard.ts";

export const WEBHOOK_USER_AGENT = "Switchyard-Webhooks/1";
export const EVENT_ID_HEADER = "Switchyard-Event-Id";
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** The most of a receiver's answer that is read (then thrown away). */
export const MAX_WEBHOOK_RESPONSE_BYTES = 64 * 1024;

export interface WebhookDelivery {
  url: string;
  /** The JSON text to send (the final task record); signed as is. */
  body: string;
  /** The account's current webhook secret. */
  secret: string;
  /** The same on every attempt of one event, so receivers can drop duplicates. */
  eventId: string;
  policy: WebhookAddressPolicy;
  /** For the whole attempt: lookup, connect, request and reading the answer (default 10 s). */
  timeoutMs?: number;
  /** Milliseconds since the epoch, for the signature's `t` and the attempt's `at` (default `Date.now`). */
  now?: () => number;
  /** Host name resolution (default `dns.lookup`); tests inject answers. */
  resolve?: WebhookResolver;
}

export interface WebhookDeliveryResult extends WebhookAttempt {
  /** The receiver answered 2xx. */
  ok: boolean;
}

/** A lookup that answers only with the addresses already checked, whatever DNS says now. */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options: LookupOptions, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    const usable = family ? addresses.filter((entry) => entry.family === family) : addresses;
    if (usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`no checked IPv${family} address`);
      error.code = "ENOTFOUND";
      callback(error, "", 0);
    } else if (options.all) {
      callback(
        null,
        usable.map((entry): LookupAddress => ({ ...entry })),
      );
    } else {
      callback(null, usable[0]!.address, usable[0]!.family);
    }
  };
}

/** Resolves with `work`, or rejects when `signal` aborts first (a DNS lookup cannot be aborted). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Reads at most `limit` bytes of the answer and drops them; stopping early closes the body. */
async function discardBounded(body: AsyncIterable<Buffer>, limit: number): Promise<void> {
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen >= limit) break;
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof WebhookUrlError) return `refused: ${error.message}`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code)
    ? `connection failed: ${code} ${message}`
    : `connection failed: ${message}`;
}

/** Makes one delivery attempt; never throws (every failure is in the result). */
export async function deliverWebhook(delivery: WebhookDelivery): Promise<WebhookDeliveryResult> {
  const timeoutMs = delivery.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const startedAt = (delivery.now ?? Date.now)();
  const started = performance.now();
  const at = new Date(startedAt).toISOString();
  const finish = (outcome: Omit<WebhookDeliveryResult, "at" | "durationMs">) => ({
    at,
    ...outcome,
    durationMs: Math.round(performance.now() - started),
  });

  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`no answer within ${timeoutMs} ms`)),
    timeoutMs,
  );
  let agent: Agent | undefined;
  let status: number | undefined;
  try {
    const checked = await untilAborted(
      checkWebhookUrl(delivery.url, delivery.policy, { resolve: delivery.resolve }),
      deadline.signal,
    );
    agent = new Agent({
      connect: { lookup: pinnedLookup(checked.addresses), timeout: timeoutMs },
      // The deadline above bounds the whole attempt; undici's own timers are not needed.
      headersTimeout: 0,
      bodyTimeout: 0,
      connections: 1,
      pipelining: 0,
    });
    const response = await request(checked.url, {
      method: "POST",
      dispatcher: agent,
      signal: deadline.signal,
      headers: {
        "content-type": "application/json",
        "user-agent": WEBHOOK_USER_AGENT,
        [SIGNATURE_HEADER.toLowerCase()]: signWebhook(
          delivery.secret,
          delivery.body,
          Math.floor(startedAt / 1000),
        ),
        [EVENT_ID_HEADER.toLowerCase()]: delivery.eventId,
      },
      body: delivery.body,
    });
    status = response.statusCode;
    await discardBounded(response.body, MAX_WEBHOOK_RESPONSE_BYTES).catch(() => {});
    if (status >= 200 && status < 300) return finish({ ok: true, status });
    const error =
      status >= 300 && status < 400
        ? `receiver answered HTTP ${status} (redirects are not followed)`
        : `receiver answered HTTP ${status}`;
    return finish({ ok: false, status, error });
  } catch (error) {
    if (deadline.signal.aborted)
      return finish({ ok: false, status, error: `timed out after ${timeoutMs} ms` });
    return finish({ ok: false, status, error: describeFailure(error) });
  } finally {
    clearTimeout(timer);
    await agent?.destroy().catch(() => {});
  }
}
