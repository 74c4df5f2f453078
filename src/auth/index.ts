/**
 * @module auth
 * Key format and hashing, password hashing, and the authenticator.
 */
export * from "./api-key.ts";
export * from "./attempt-limiter.ts";
export * from "./authenticator.ts";
export * from "./password.ts";
