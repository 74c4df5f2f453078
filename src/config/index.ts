/**
 * @module config
 * Configuration schema and loader.
 */
export * from "./load-config.ts";
export * from "./schema.ts";
