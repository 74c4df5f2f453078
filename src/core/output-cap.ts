/**
 * @module core/output-cap
 * Charge ≤ hold starts here: every token request sends an explicit output cap upstream (the
 * client's, else the model's maximum output), and the hold covers it. When the available balance
 * cannot cover that cap, the cap is lowered to the largest one it covers (unless the operator
 * chose `billing.when_balance_short: reject`); 402 only when not even `min_output_tokens` fit.
 * A key spend cap short of the hold lowers the cap the same way, to what the cap has left.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import {
  type CostEstimate,
  type Reservation,
  type ReserveInput,
  spendLimitRoom,
} from "../billing/index.ts";
import type { CatalogModel } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { Services } from "./services.ts";

/** How a token endpoint reads and sets the output cap of its request body. */
export interface OutputCapControl<T> {
  of(body: T, model: CatalogModel): number;
  with(body: T, cap: number): T;
}

type Estimator<T> = (body: T, model: CatalogModel) => Promise<CostEstimate>;

export interface HeldRequest<T> {
  /** The body to send: with its explicit (possibly lowered) output cap. */
  body: T;
  reservation: Reservation;
  /** Set when the cap was lowered to fit the balance. */
  loweredTo?: number;
}

/** The largest cap in [min, from) whose estimate fits `available`, or undefined. */
async function largestFittingCap<T>(
  body: T,
  model: CatalogModel,
  control: OutputCapControl<T>,
  estimate: Estimator<T>,
  from: { cap: number; costMicros: number },
  minimum: number,
  available: number,
): Promise<number | undefined> {
  if (from.cap <= minimum) return undefined;
  const atMinimum = (await estimate(control.with(body, minimum), model)).costMicros;
  if (atMinimum > available) return undefined;
  // The estimate is affine in the cap (up to rounding): solve, then step down until it fits.
  const perToken = (from.costMicros - atMinimum) / (from.cap - minimum);
  if (perToken <= 0) return undefined;
  let cap = Math.min(from.cap - 1, minimum + Math.floor((available - atMinimum) / perToken));
  for (let tries = 0; tries < 4 && cap > minimum; tries++) {
    const cost = (await estimate(control.with(body, cap), model)).costMicros;
    if (cost <= available) return cap;
    cap = Math.max(minimum, cap - Math.ceil((cost - available) / perToken) - 1);
  }
  return minimum;
}

/** Places the request's hold, lowering its output cap to fit the balance where allowed. */
export async function holdRequest<S extends TSchema>(
  services: Services,
  endpoint: {
    outputCap?: OutputCapControl<Static<S>>;
    estimateCost?: Estimator<Static<S>>;
  },
  body: Static<S>,
  model: CatalogModel,
  reserve: Omit<ReserveInput, "estimateMicros" | "floorMicros" | "outputCapLoweredTo">,
): Promise<HeldRequest<Static<S>>> {
  const control = endpoint.outputCap;
  const estimateCost = endpoint.estimateCost;
  const cap = control?.of(body, model);
  const sent = control && cap !== undefined ? control.with(body, cap) : body;
  const estimate = await estimateCost?.(sent, model);
  const place = (cost: CostEstimate | undefined, outputCapLoweredTo?: number) =>
    services.billing.reserve({
      requestId: reserve.requestId,
      accountId: reserve.accountId,
      keyId: reserve.keyId,
      model: reserve.model,
      endpoint: reserve.endpoint,
      estimateMicros: cost?.costMicros ?? 0,
      floorMicros: cost?.floorMicros,
      outputCapLoweredTo,
      ...(reserve.spendLimits && { spendLimits: reserve.spendLimits }),
      ...(reserve.attribution ? { attribution: reserve.attribution } : {}),
    });
  try {
    const reservation = await place(estimate);
    return { body: sent, reservation };
  } catch (error) {
    if (
      !control ||
      cap === undefined ||
      !estimate ||
      !estimateCost ||
      services.config.billing.when_balance_short !== "lower_output_cap" ||
      !GatewayError.isInstance(error) ||
      (error.code !== "insufficient_balance" && error.code !== "key_spend_limit_reached")
    )
      throw error;
    const account = await services.store.findAccountById(reserve.accountId);
    const balance = account ? account.balanceMicros - account.heldMicros : 0;
    const available = Math.min(balance, spendLimitRoom(error) ?? balance);
    const lowered = await largestFittingCap(
      sent,
      model,
      control,
      estimateCost,
      { cap, costMicros: estimate.costMicros },
      services.config.billing.min_output_tokens,
      available,
    );
    if (lowered === undefined) throw error;
    const loweredBody = control.with(sent, lowered);
    const loweredEstimate = await estimateCost(loweredBody, model);
    return {
      body: loweredBody,
      reservation: await place(loweredEstimate, lowered),
      loweredTo: lowered,
    };
  }
}
