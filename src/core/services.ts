/**
 * @module core/services
 * The bag of interfaces every endpoint receives. Only `src/main.ts` builds concrete services;
 * tests build their own.
 */
import type { Logger } from "pino";
import type { AttemptLimiter, Authenticator } from "../auth/index.ts";
import type { BillingService } from "../billing/index.ts";
import type { Catalog } from "../catalog/index.ts";
import type { Config } from "../config/schema.ts";
import type { QuotaLimiter } from "../limits/index.ts";
import type { ProviderRegistry } from "../providers/index.ts";
import type { Store } from "../store/index.ts";
import type { VideoTaskService } from "../tasks/index.ts";
import type { GatewayMetrics, GatewayTracer } from "../telemetry/index.ts";

export interface Services {
  config: Config;
  store: Store;
  authenticator: Authenticator;
  catalog: Catalog;
  providers: ProviderRegistry;
  billing: BillingService;
  quotas: QuotaLimiter;
  /** Login and registration attempt limits. */
  attempts: AttemptLimiter;
  /** The video task engine, as the video endpoints use it. */
  videoTasks: VideoTaskService;
  logger: Logger;
  /** Where lifecycle points report metrics; absent means none are kept (`metricsOf`). */
  metrics?: GatewayMetrics;
  /** Makes request and upstream-attempt spans; absent means tracing is off (docs/observability.md). */
  tracer?: GatewayTracer;
  /** Unix milliseconds; injectable for tests. */
  now(): number;
}
