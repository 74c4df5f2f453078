/**
 * @module tasks/webhooks
 * Signed webhook delivery for finished tasks: the signature, the address policy (checked at
 * submission and again at each delivery), the sender that connects only to checked addresses,
 * and the retry schedule; `createWebhookDispatcher` puts them together for the engine.
 */
import { randomBytes } from "node:crypto";
import type { WebhookDispatcher } from "../video-engine.ts";
import { nextAttemptDelayMs, shouldGiveUp, type WebhookRetrySchedule } from "./webhook-schedule.ts";
import { deliverWebhook } from "./webhook-sender.ts";
import type { WebhookAddressPolicy } from "./webhook-url-guard.ts";

export * from "./webhook-schedule.ts";
export * from "./webhook-sender.ts";
export * from "./webhook-signature.ts";
export * from "./webhook-url-guard.ts";

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

export function createWebhookDispatcher(options: {
  policy: WebhookAddressPolicy;
  schedule: WebhookRetrySchedule;
  timeoutMs: number;
}): WebhookDispatcher {
  return {
    async deliver(event) {
      const result = await deliverWebhook({
        ...event,
        policy: options.policy,
        timeoutMs: options.timeoutMs,
      });
      return {
        ok: result.ok,
        durationMs: result.durationMs,
        ...(result.status === undefined ? {} : { status: result.status }),
        ...(result.error === undefined ? {} : { error: result.error }),
      };
    },
    retryDelayMs: (attempts) => nextAttemptDelayMs(attempts, options.schedule),
    givesUp: (firstAt, now) => shouldGiveUp(firstAt, now, options.schedule),
    newSecret: newWebhookSecret,
  };
}
