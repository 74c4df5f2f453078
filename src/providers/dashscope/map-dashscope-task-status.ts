/**
 * @module providers/dashscope/map-dashscope-task-status
 * Maps a DashScope async task's `output.task_status` to the normalized video task status.
 * `UNKNOWN` is what DashScope answers for a task id it does not know or no longer keeps (task
 * records live 24 h), so it reads as expired. Any other value is not part of the protocol.
 */
import type { VideoTaskStatus } from "../../spec/index.ts";

export function mapDashScopeTaskStatus(status: unknown): VideoTaskStatus | undefined {
  switch (status) {
    case "PENDING":
      return "queued";
    case "RUNNING":
      return "running";
    case "SUCCEEDED":
      return "succeeded";
    case "FAILED":
      return "failed";
    case "CANCELED":
      return "canceled";
    case "UNKNOWN":
      return "expired";
    default:
      return undefined;
  }
}
