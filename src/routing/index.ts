/**
 * @module routing
 * Route strategies (ordered fallback, weighted), the attempt executor and upstream health (a
 * circuit breaker per route).
 */
export * from "./attempt-routes.ts";
export * from "./circuit-breaker.ts";
