/**
 * @module providers/kit/tool-call-name
 * The name of a tool call an upstream answered. A call without one is a broken answer (kind
 * `protocol`), never a call named "" that a client would try to run.
 */
import { UpstreamError } from "../../spec/index.ts";

export function toolCallName(name: unknown, upstreamRequestId?: string): string {
  if (typeof name === "string" && name.length > 0) return name;
  throw new UpstreamError({
    kind: "protocol",
    message: "Upstream tool call has no name.",
    ...(upstreamRequestId ? { upstreamRequestId } : {}),
  });
}
