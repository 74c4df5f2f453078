/**
 * @module catalog
 * Model catalog: schema, loading and validation, run-time lookups and route resolution.
 */
export * from "./catalog.ts";
export * from "./closest-ids.ts";
export * from "./load-catalog.ts";
export * from "./schema.ts";
