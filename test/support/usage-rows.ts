/**
 * @module test/support/usage-rows
 * A request's usage record as the account API lists it, found by request id; waits for it (a
 * stream's record is written when it settles, which can come just after its last byte).
 */
import type { TestGateway } from "./gateway-harness.ts";
import { waitFor } from "./sandbox-stats.ts";

export interface UsageRow {
  request_id: string;
  status: string;
  input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_micros: number;
  held_micros: number;
  usage_source: string;
}

export function usageRowOf(
  gateway: TestGateway,
  key: string,
  requestId: string,
): Promise<UsageRow | undefined> {
  return waitFor(
    async () => {
      const response = await gateway.request("/v1/account/usage?limit=1000", { key });
      const { data } = (await response.json()) as { data: UsageRow[] };
      return data.find((row) => row.request_id === requestId);
    },
    (row) => row !== undefined,
  );
}
