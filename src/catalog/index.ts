/**
 * @module catalog
 * Model catalog: schema, loading and validation, route resolution, and run-time lookups.
 */
export * from "./catalog.ts";
export * from "./closest-ids.ts";
export * from "./load-catalog.ts";
export * from "./route-resolution.ts";
export * from "./routing-summary.ts";
export * from "./schema.ts";
