/**
 * @module core/model-call
 * The request pipeline, written once for every model endpoint and every transport:
 * resolve model → endpoint kind → key allowlist → vendor configured → validate (schema, then the
 * model's own rules) → what the body refers to (`resolve`) → quota lease → billing hold →
 * operation → settle → log. The caller is already authenticated. A complete answer (JSON, an
 * accepted task) comes back settled; a long one (a stream of events or bytes) comes back with
 * `deliver`, which hands it to the transport's sink and settles what was delivered however the
 * delivery ends (`core/deliver`).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import {
  type Reservation,
  type SettleDetails,
  type Settlement,
  spendLimitsOf,
} from "../billing/index.ts";
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import { GatewayError } from "../errors/index.ts";
import type { CallSignal, CallWarning, Usage } from "../spec/index.ts";
import {
  type GatewayMetrics,
  NO_METRICS,
  type RefusalKind,
  type RequestTrace,
} from "../telemetry/index.ts";
import { openAIUserAttribution } from "./attribution.ts";
import { type DeliverySink, deliverLongResult } from "./deliver.ts";
import type { KeyCaller } from "./model-call-runner.ts";
import type { LongResult, ModelEndpoint } from "./operation.ts";
import { holdRequest } from "./output-cap.ts";
import { attemptTracing, bindRequestContext } from "./request-context.ts";
import { type ModelTarget, requestedModel, resolveModel } from "./resolve-model.ts";
import type { Services } from "./services.ts";
import { compileValidator } from "./validate.ts";

/** One model request as a transport hands it over. */
export interface ModelCallInput {
  caller: KeyCaller;
  /** The parsed request body. */
  body: unknown;
  requestId: string;
  /** Aborted when the client goes away. */
  signal: CallSignal;
  /** Request headers, lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  /** `performance.now()` when the request arrived (for latency figures). */
  started: number;
  /** The transport, named in the request log. */
  via: "http" | "mcp";
  /** Told at once when a sandbox route is called (error answers are marked too). */
  onSandboxRoute?(): void;
  /** The client's own request id (`X-Request-Id`/`X-Client-Request-Id`), when valid. */
  clientRequestId?: string | undefined;
  /** The request's trace, when the gateway traces (its SERVER span is the transport's). */
  trace?: RequestTrace | undefined;
}

/** What every answer carries besides its body. */
export interface ModelCallHead {
  model: CatalogModel;
  status: number;
  /** The quota lease's headers and the endpoint's own headers. */
  headers: Record<string, string>;
  /** Settings that were changed, ignored or dropped. */
  warnings: readonly CallWarning[];
  /** True when a sandbox route took part. */
  sandbox: boolean;
  /** Set when the output cap was lowered to fit the balance. */
  outputCapLoweredTo: number | undefined;
}

export type ModelCallOutcome =
  | (ModelCallHead & { kind: "json" | "accepted"; body: unknown; costMicros: number })
  | (ModelCallHead & {
      kind: "long";
      result: LongResult;
      /** Delivers the result through `sink`, settles it and releases the lease; the charge. */
      deliver(sink: DeliverySink): Promise<number>;
    });

/** A model endpoint ready to run: its validator compiled once. */
export interface PreparedEndpoint<S extends TSchema = TSchema> {
  readonly endpoint: ModelEndpoint<S>;
  /** The schema check (with the endpoint's null handling); throws the 400. */
  validate(body: unknown): Static<S>;
  call(input: ModelCallInput): Promise<ModelCallOutcome>;
}

export function prepareModelEndpoint<S extends TSchema>(
  services: Services,
  endpoint: ModelEndpoint<S>,
): PreparedEndpoint<S> {
  const validate = compileValidator(endpoint.body, { nullMeansAbsent: endpoint.nullMeansAbsent });
  const target: ModelTarget = {
    kinds: endpoint.kinds,
    path: endpoint.path,
    unknownModel: endpoint.unknownModel,
  };
  return {
    endpoint,
    validate,
    call: (input) =>
      runModelCall(services, endpoint, target, validate, input).catch((error: unknown) => {
        const refusal = GatewayError.isInstance(error) ? REFUSALS.get(error.code) : undefined;
        if (refusal) (services.metrics ?? NO_METRICS).requestRefused(refusal);
        throw error;
      }),
  };
}

/** Error codes that refuse a request for a limit, by the kind the metrics count them under. */
const REFUSALS = new Map<string, RefusalKind>([
  ["rate_limited", "rpm"],
  ["token_rate_limited", "tpm"],
  ["concurrency_limited", "concurrency"],
  ["quota_unavailable", "quota_unavailable"],
  ["insufficient_balance", "balance"],
  ["key_spend_limit_reached", "spend_limit"],
]);

async function runModelCall<S extends TSchema>(
  services: Services,
  endpoint: ModelEndpoint<S>,
  target: ModelTarget,
  validate: (body: unknown) => Static<S>,
  input: ModelCallInput,
): Promise<ModelCallOutcome> {
  const { caller, requestId, started } = input;
  const model = resolveModel(services, caller.key, requestedModel(input.body), target);
  const trace = input.trace;
  trace?.describe({
    endpoint: endpoint.path,
    model: model.id,
    accountId: caller.accountId,
    keyId: caller.key.id,
    requestId,
    clientRequestId: input.clientRequestId,
  });
  bindRequestContext(input);
  const checked = validate(input.body);
  endpoint.validateForModel?.(checked, model);
  const attribution = endpoint.attribution
    ? endpoint.attribution(checked)
    : openAIUserAttribution(checked);
  const validated = endpoint.resolve
    ? await endpoint.resolve(checked, { accountId: caller.accountId, services, model })
    : checked;

  const lease = await services.quotas.acquire(caller.key, requestId);
  let reservation: Reservation | undefined;
  let settlement: Settlement | undefined;
  let upstreamAnsweredAt: number | undefined;
  let sandbox = false;
  /** What the completion line tells: the route last called and the usage settled. */
  const served: Served = {};
  const settle = async (usage: Usage, details: SettleDetails = {}) => {
    served.usage = usage;
    settlement = await reservation!.settle(usage, {
      ttfbMs: (upstreamAnsweredAt ?? performance.now()) - started,
      ...details,
      status: details.status ?? (input.signal.aborted ? "aborted" : "succeeded"),
    });
    // The tokens count against the key's `tpm` from now on.
    if (usage.tokens) lease.spend(usage.tokens.input.total + usage.tokens.output.total);
    return settlement;
  };
  try {
    let body = validated;
    let outputCapLoweredTo: number | undefined;
    if (!endpoint.holdsItself) {
      const held = await holdRequest(services, endpoint, validated, model, {
        requestId,
        accountId: caller.accountId,
        keyId: caller.key.id,
        model,
        endpoint: endpoint.path,
        spendLimits: spendLimitsOf(caller.key),
        ...(attribution ? { attribution } : {}),
      });
      reservation = trackHold(held.reservation, services.metrics ?? NO_METRICS);
      body = held.body;
      outputCapLoweredTo = held.loweredTo;
    }
    const result = await endpoint.run(body, {
      requestId,
      accountId: caller.accountId,
      key: caller.key,
      model,
      services,
      signal: input.signal,
      headers: input.headers,
      settle,
      ...(trace ? { tracing: attemptTracing(trace) } : {}),
      routeCalled: (route) => {
        served.route = route;
        if (!route.sandbox || sandbox) return;
        sandbox = true;
        input.onSandboxRoute?.();
      },
    });
    upstreamAnsweredAt = performance.now();
    const ttfbMs = upstreamAnsweredAt - started;
    const head: ModelCallHead = {
      model,
      status: 200,
      headers: result.headers ? { ...lease.headers, ...result.headers } : lease.headers,
      warnings: result.warnings ?? [],
      sandbox,
      outputCapLoweredTo,
    };
    if (result.kind === "accepted") {
      head.status = result.status;
      logCompleted(services, endpoint, input, model, served, head.status, ttfbMs, 0, false);
      lease.release();
      return { ...head, kind: "accepted", body: result.body, costMicros: 0 };
    }
    if (result.kind === "json" && served.route)
      services.routeHealth?.report(served.route, "success");
    if (result.kind === "json") {
      const charged = await settle(result.usage, result.settleDetails);
      const body = "render" in result ? result.render(charged) : result.body;
      head.status = result.status ?? 200;
      logCompleted(
        services,
        endpoint,
        input,
        model,
        served,
        head.status,
        ttfbMs,
        charged.costMicros,
        false,
      );
      lease.release();
      return { ...head, kind: "json", body, costMicros: charged.costMicros };
    }
    const held = reservation!;
    return {
      ...head,
      kind: "long",
      result,
      deliver: async (sink) => {
        // A delivery that throws still ends the call for the request's trace.
        const delivered = deliverLongResult(result, sink, {
          logger: services.logger,
          requestId,
          lease,
          signal: input.signal,
          settle,
          release: (reason) => held.release(reason),
          checkpoint: (usage) => held.checkpoint(usage),
          beginDelivery: () => held.beginDelivery(),
          settled: () => settlement !== undefined,
          checkpointMs: services.config.billing.checkpoint_seconds * 1000,
        });
        await delivered.catch((error: unknown) => {
          trace?.callEnded();
          throw error;
        });
        // A stream the upstream broke mid-way counts against its route's health.
        if (served.route && result.interrupted?.() === true)
          services.routeHealth?.report(served.route, "failure", {
            kind: "dropped",
            message: `the upstream broke the ${result.kind === "binary" ? "audio" : "stream"} mid-way`,
          });
        else if (served.route) services.routeHealth?.report(served.route, "success");
        const costMicros = settlement?.costMicros ?? 0;
        logCompleted(services, endpoint, input, model, served, 200, ttfbMs, costMicros, true);
        return costMicros;
      },
    };
  } catch (error) {
    lease.release();
    if (settlement === undefined) await reservation?.release("request failed");
    trace?.callEnded();
    throw error;
  }
}

interface Served {
  route?: ResolvedRoute;
  usage?: Usage;
}

/** The hold's gauge follows the reservation: opened now, closed by its settlement or release. */
function trackHold(reservation: Reservation, metrics: GatewayMetrics): Reservation {
  const micros = reservation.heldMicros;
  if (micros <= 0) return reservation;
  metrics.holdOpened(micros);
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    metrics.holdClosed(micros);
  };
  return {
    heldMicros: micros,
    settle: (usage, details) => reservation.settle(usage, details).finally(close),
    release: (reason) => reservation.release(reason).finally(close),
    checkpoint: (usage) => reservation.checkpoint(usage),
    beginDelivery: () => reservation.beginDelivery(),
  };
}

/**
 * The one `info` line of a finished model request: who (account, key id — never the key),
 * what (model, the route's vendor and upstream model), how it went (status, latency, time to
 * first byte) and what it cost (tokens and other units, micro-USD); and the same facts, without
 * who, to the metrics.
 */
function logCompleted(
  services: Services,
  endpoint: { path: string },
  input: ModelCallInput,
  model: CatalogModel,
  served: Served,
  status: number,
  ttfbMs: number,
  costMicros: number,
  long: boolean,
): void {
  (services.metrics ?? NO_METRICS).modelCallCompleted({
    endpoint: endpoint.path,
    model: model.id,
    vendor: served.route?.vendor,
    stream: long,
    ttfbSeconds: ttfbMs / 1000,
    usage: served.usage,
    costMicros,
  });
  const tokens = served.usage?.tokens;
  const media = served.usage?.media;
  input.trace?.completed({
    vendor: served.route?.vendor,
    upstreamModel: served.route?.upstreamModel,
    stream: long,
    inputTokens: tokens?.input.total,
    outputTokens: tokens?.output.total,
    costMicros,
    aborted: input.signal.aborted,
  });
  input.trace?.callEnded();
  if (!services.logger.isLevelEnabled("info")) return;
  services.logger.info(
    {
      requestId: input.requestId,
      ...(input.clientRequestId ? { clientRequestId: input.clientRequestId } : {}),
      accountId: input.caller.accountId,
      keyId: input.caller.key.id,
      model: model.id,
      ...(served.route
        ? { vendor: served.route.vendor, upstreamModel: served.route.upstreamModel }
        : {}),
      path: endpoint.path,
      ...(input.via === "http" ? {} : { via: input.via }),
      status,
      latencyMs: Math.round(performance.now() - input.started),
      ttfbMs: Math.round(ttfbMs),
      ...(tokens ? { inputTokens: tokens.input.total, outputTokens: tokens.output.total } : {}),
      ...(media ? { media } : {}),
      costMicros,
      ...(input.signal.aborted ? { aborted: true } : {}),
    },
    "request completed",
  );
}
