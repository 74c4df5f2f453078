/**
 * @module routing
 * Route strategies (ordered fallback, weighted) and the attempt executor.
 */
export * from "./attempt-routes.ts";
