/**
 * @module errors
 * The error catalogue and `GatewayError`. Imports nothing outside itself.
 */
export * from "./catalogue.ts";
export * from "./gateway-error.ts";
