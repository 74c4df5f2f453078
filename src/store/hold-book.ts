/**
 * @module store/hold-book
 * Billing holds kept in memory, for a database that only this process writes (the embedded
 * SQLite file). A hold is a promise not to spend, not a movement of money: keeping it in memory
 * saves a write and a commit per request, and a crash loses nothing but the promises, which end
 * with the requests they covered. Holds on PostgreSQL (several instances) stay in the table.
 * The in-flight row of a held request is written only once it starts delivering (a stream's
 * first byte): until then a crash loses nothing the client received, so there is nothing to
 * settle, and the common request (one answer at its settlement) writes no row at all.
 */
import type { InflightRequestsTable } from "./schema.ts";

export class HoldBook {
  readonly #byRequest = new Map<
    string,
    {
      accountId: string;
      keyId: string | null;
      amountMicros: number;
      inflight?: InflightRequestsTable;
      recorded?: boolean;
    }
  >();
  readonly #byAccount = new Map<string, number>();
  readonly #byKey = new Map<string, number>();

  /** How many requests hold money now. */
  get size(): number {
    return this.#byRequest.size;
  }

  /** Sum of the open holds of the keys `keyIds` (a key's spend cap counts them). */
  heldForKeys(keyIds: readonly string[]): number {
    let total = 0;
    for (const id of keyIds) total += this.#byKey.get(id) ?? 0;
    return total;
  }

  /** Sum of the open holds of `accountId`, leaving out the one of `exceptRequestId`. */
  heldFor(accountId: string, exceptRequestId?: string): number {
    const total = this.#byAccount.get(accountId) ?? 0;
    const own = exceptRequestId === undefined ? undefined : this.#byRequest.get(exceptRequestId);
    return own && own.accountId === accountId ? total - own.amountMicros : total;
  }

  /** The hold of `requestId`, or 0. */
  amountOf(requestId: string): number {
    return this.#byRequest.get(requestId)?.amountMicros ?? 0;
  }

  /**
   * Places (or replaces) the hold of `requestId`; placing the same hold twice changes nothing.
   * `inflight` is the request's in-flight row, written only once it starts delivering.
   */
  place(
    requestId: string,
    accountId: string,
    amountMicros: number,
    inflight?: InflightRequestsTable,
  ): void {
    this.remove(requestId);
    const keyId = inflight?.key_id ?? null;
    this.#byRequest.set(requestId, {
      accountId,
      keyId,
      amountMicros,
      ...(inflight && { inflight }),
    });
    this.#byAccount.set(accountId, (this.#byAccount.get(accountId) ?? 0) + amountMicros);
    if (keyId !== null) this.#byKey.set(keyId, (this.#byKey.get(keyId) ?? 0) + amountMicros);
  }

  /** The in-flight row to write now (once per hold), or undefined when written or unknown. */
  takeInflight(requestId: string): InflightRequestsTable | undefined {
    const hold = this.#byRequest.get(requestId);
    if (!hold?.inflight || hold.recorded) return undefined;
    hold.recorded = true;
    return hold.inflight;
  }

  /** Whether the request's in-flight row was written (and must be deleted at settlement). */
  recorded(requestId: string): boolean {
    return this.#byRequest.get(requestId)?.recorded === true;
  }

  remove(requestId: string): void {
    const hold = this.#byRequest.get(requestId);
    if (!hold) return;
    this.#byRequest.delete(requestId);
    const left = (this.#byAccount.get(hold.accountId) ?? 0) - hold.amountMicros;
    if (left === 0) this.#byAccount.delete(hold.accountId);
    else this.#byAccount.set(hold.accountId, left);
    if (hold.keyId === null) return;
    const keyLeft = (this.#byKey.get(hold.keyId) ?? 0) - hold.amountMicros;
    if (keyLeft === 0) this.#byKey.delete(hold.keyId);
    else this.#byKey.set(hold.keyId, keyLeft);
  }
}
