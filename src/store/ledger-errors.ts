/**
 * @module store/ledger-errors
 * The refusal of a ledger entry that would take a balance out of its range; the HTTP layer
 * turns it into a catalogued 400.
 */

/** Why `adjustBalance` refused an entry. */
export class BalanceOutOfRange extends Error {
  readonly reason: "above_maximum" | "below_held";
  readonly balanceMicros: number;
  readonly heldMicros: number;
  readonly maxBalanceMicros: number;

  constructor(
    reason: "above_maximum" | "below_held",
    balanceMicros: number,
    heldMicros: number,
    maxBalanceMicros: number,
  ) {
    super(
      reason === "above_maximum"
        ? `The balance would exceed the maximum of ${maxBalanceMicros} micro-USD.`
        : `The balance would fall below the ${heldMicros} micro-USD held by requests in flight.`,
    );
    this.name = "BalanceOutOfRange";
    this.reason = reason;
    this.balanceMicros = balanceMicros;
    this.heldMicros = heldMicros;
    this.maxBalanceMicros = maxBalanceMicros;
  }
}
