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
import type { Reservation, SettleDetails, Settlement } from "../billing/index.ts";
import type { CatalogModel } from "../catalog/index.ts";
import type { CallWarning, Usage } from "../spec/index.ts";
import { type DeliverySink, deliverLongResult } from "./deliver.ts";
import type { KeyCaller } from "./model-call-runner.ts";
import type { LongResult, ModelEndpoint } from "./operation.ts";
import { holdRequest } from "./output-cap.ts";
import { requestedModel, resolveModel } from "./resolve-model.ts";
import type { Services } from "./services.ts";
import { compileValidator } from "./validate.ts";

/** One model request as a transport hands it over. */
export interface ModelCallInput {
  caller: KeyCaller;
  /** The parsed request body. */
  body: unknown;
  requestId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Request headers, lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  /** `performance.now()` when the request arrived (for latency figures). */
  started: number;
  /** The transport, named in the request log. */
  via: "http" | "mcp";
  /** Told at once when a sandbox route is called (error answers are marked too). */
  onSandboxRoute?(): void;
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
  outputCapLoweredTo?: number;
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
  return {
    endpoint,
    validate,
    call: (input) => runModelCall(services, endpoint, validate, input),
  };
}

async function runModelCall<S extends TSchema>(
  services: Services,
  endpoint: ModelEndpoint<S>,
  validate: (body: unknown) => Static<S>,
  input: ModelCallInput,
): Promise<ModelCallOutcome> {
  const { caller, requestId, started } = input;
  const model = resolveModel(services, caller.key, requestedModel(input.body), {
    kinds: endpoint.kinds,
    path: endpoint.path,
    unknownModel: endpoint.unknownModel,
  });
  const checked = validate(input.body);
  endpoint.validateForModel?.(checked, model);
  const validated = endpoint.resolve
    ? await endpoint.resolve(checked, { accountId: caller.accountId, services })
    : checked;

  const lease = await services.quotas.acquire(caller.key, requestId);
  let reservation: Reservation | undefined;
  let settlement: Settlement | undefined;
  let upstreamAnsweredAt: number | undefined;
  let sandbox = false;
  const settle = async (usage: Usage, details: SettleDetails = {}) => {
    settlement = await reservation!.settle(usage, {
      ttfbMs: (upstreamAnsweredAt ?? performance.now()) - started,
      ...details,
      status: details.status ?? (input.signal.aborted ? "aborted" : "succeeded"),
    });
    return settlement;
  };
  const log = (status: number, extra: { aborted?: boolean } = {}) =>
    logCompleted(services, {
      requestId,
      model,
      path: endpoint.path,
      via: input.via,
      status,
      started,
      ttfbMs: (upstreamAnsweredAt ?? performance.now()) - started,
      costMicros: settlement?.costMicros ?? 0,
      ...extra,
    });
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
      });
      reservation = held.reservation;
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
      routeCalled: (route) => {
        if (!route.sandbox || sandbox) return;
        sandbox = true;
        input.onSandboxRoute?.();
      },
    });
    upstreamAnsweredAt = performance.now();
    const head = (status: number): ModelCallHead => ({
      model,
      status,
      headers: { ...lease.headers, ...result.headers },
      warnings: result.warnings ?? [],
      sandbox,
      ...(outputCapLoweredTo !== undefined ? { outputCapLoweredTo } : {}),
    });
    if (result.kind === "accepted") {
      log(result.status);
      lease.release();
      return { ...head(result.status), kind: "accepted", body: result.body, costMicros: 0 };
    }
    if (result.kind === "json") {
      const { costMicros } = await settle(result.usage);
      const status = result.status ?? 200;
      log(status);
      lease.release();
      return { ...head(status), kind: "json", body: result.body, costMicros };
    }
    const held = reservation!;
    return {
      ...head(200),
      kind: "long",
      result,
      deliver: async (sink) => {
        await deliverLongResult(result, sink, {
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
        log(200, input.signal.aborted ? { aborted: true } : {});
        return settlement?.costMicros ?? 0;
      },
    };
  } catch (error) {
    lease.release();
    if (settlement === undefined) await reservation?.release("request failed");
    throw error;
  }
}

function logCompleted(
  services: Services,
  entry: {
    requestId: string;
    model: CatalogModel;
    path: string;
    via: "http" | "mcp";
    status: number;
    started: number;
    ttfbMs: number;
    costMicros: number;
    aborted?: boolean;
  },
): void {
  services.logger.info(
    {
      requestId: entry.requestId,
      model: entry.model.id,
      path: entry.path,
      ...(entry.via === "http" ? {} : { via: entry.via }),
      status: entry.status,
      latencyMs: Math.round(performance.now() - entry.started),
      ttfbMs: Math.round(entry.ttfbMs),
      costMicros: entry.costMicros,
      ...(entry.aborted ? { aborted: true } : {}),
    },
    "request completed",
  );
}
