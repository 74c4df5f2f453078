/**
 * @module spec
 * Provider interfaces, normalized stream parts, usage and warnings, and the classification of IP
 * addresses (`address-ranges.ts`) providers and the webhook policy share. Imports nothing
 * outside itself.
 */
export * from "./address-ranges.ts";
export * from "./call-signal.ts";
export * from "./chat-model.ts";
export * from "./embedding-model.ts";
export * from "./image-model.ts";
export * from "./messages-passthrough.ts";
export * from "./responses-passthrough.ts";
export * from "./speech-model.ts";
export * from "./upstream-error.ts";
export * from "./usage.ts";
export * from "./video-model.ts";
export * from "./warning.ts";
