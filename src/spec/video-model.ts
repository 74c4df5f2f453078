/**
 * @module spec/video-model
 * The video capability: an asynchronous task at the vendor. The gateway submits a request body
 * already in the vendor's own shape (family A passes the client's `input` and `parameters`
 * through unchanged; family B's body is built from the client's top-level fields), then polls
 * the vendor's task until it is final. Each adapter adds what its protocol needs on the wire
 * (authentication, DashScope's `X-DashScope-Async` header) and reads the vendor's task record
 * into the normalized {@link VideoTaskState}.
 */

/** Normalized task states (the vendor's own status is kept in `providerRecord`). */
import type { CallSignal } from "./call-signal.ts";
export type VideoTaskStatus =
  | "queued"
  | "running"
  | "succeeded"
  | "failed"
  | "canceled"
  | "expired";

export const FINAL_VIDEO_STATUSES: ReadonlySet<VideoTaskStatus> = new Set([
  "succeeded",
  "failed",
  "canceled",
  "expired",
]);

export interface VideoSubmitOptions {
  upstreamModel: string;
  /** The vendor-shaped request body, without `model` (the adapter sets it to `upstreamModel`). */
  body: Record<string, unknown>;
  abortSignal?: CallSignal;
}

export interface VideoSubmission {
  /** The vendor's task id (DashScope `task_id`, xAI `request_id`). */
  providerTaskId: string;
  /** The vendor's answer to the submission, as it came. */
  providerRecord: unknown;
  upstreamRequestId?: string;
}

export interface VideoTaskState {
  status: VideoTaskStatus;
  /** The vendor's task record as it came (the body of the poll). */
  providerRecord: unknown;
  /** 0–100 when the vendor reports progress. */
  progress?: number;
  /** The finished video (succeeded only): a link at the vendor, time-limited. */
  videoUrl?: string;
  /** Seconds of video the vendor reports it generated (what is billed when it differs). */
  durationSeconds?: number;
  seed?: number;
  /** Failed, canceled or expired: the vendor's code and message. */
  error?: { code: string; message: string };
  /** The vendor's usage object, as it came. */
  usage?: unknown;
}

export interface VideoPollOptions {
  upstreamModel: string;
  providerTaskId: string;
  abortSignal?: CallSignal;
}

export interface VideoModel {
  /** Submits the task. Rejects with `UpstreamError` carrying the vendor's status and text. */
  submit(options: VideoSubmitOptions): Promise<VideoSubmission>;
  /** Reads the task's state at the vendor. Rejects with `UpstreamError` (a 429 is retryable). */
  poll(options: VideoPollOptions): Promise<VideoTaskState>;
  /** Asks the vendor to cancel; undefined when the vendor has no cancel. */
  cancel?(options: VideoPollOptions): Promise<void>;
}
