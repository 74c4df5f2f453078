/**
 * @module mcp/image-read-gate
 * `edit_image` reads its images (up to 25 MiB, up to 15 s a URL) before the request reaches the
 * quota lease and the billing hold, so an account could start any number of reads at once and
 * pay for none. The gate lets an account read for a few calls at a time (the rest are refused
 * with `concurrency_limited`, as a key's concurrency limit refuses) and none while it has no
 * money available. One gate per gateway process, shared by every MCP session.
 */
import type { KeyCaller } from "../core/model-call-runner.ts";
import type { Services } from "../core/services.ts";
import { GatewayError } from "../errors/index.ts";

/** `edit_image` calls of one account reading images at the same time. */
export const READS_PER_ACCOUNT = 2;

export interface ImageReadGate {
  /** Runs `read` once the caller may read; throws a 402 or 429 refusal instead. */
  run<T>(services: Services, caller: KeyCaller, read: () => Promise<T>): Promise<T>;
}

export function createImageReadGate(perAccount = READS_PER_ACCOUNT): ImageReadGate {
  const reading = new Map<string, number>();
  return {
    async run(services, caller, read) {
      const account = await services.store.findAccountById(caller.accountId);
      const available = account ? account.balanceMicros - account.heldMicros : 0;
      if (available <= 0)
        throw new GatewayError("insufficient_balance", { required: 1, available: 0 });
      const now = reading.get(caller.accountId) ?? 0;
      if (now >= perAccount) {
        throw new GatewayError(
          "concurrency_limited",
          {
            holder: "edit_image's image reads",
            limit: perAccount,
            origin: " per account",
            retry_after: 1,
          },
          { headers: { "retry-after": "1" } },
        );
      }
      reading.set(caller.accountId, now + 1);
      try {
        return await read();
      } finally {
        const left = (reading.get(caller.accountId) ?? 1) - 1;
        if (left > 0) reading.set(caller.accountId, left);
        else reading.delete(caller.accountId);
      }
    },
  };
}
