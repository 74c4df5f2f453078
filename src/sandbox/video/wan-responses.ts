/**
 * @module sandbox/video/wan-responses
 * The bodies of DashScope's task API for Wan video (protocol reference §1 "Async task
 * lifecycle", §3.4): the poll answer for each state with its string timestamps, the SUCCEEDED
 * output (`video_url`, `orig_prompt`, `actual_prompt` when the prompt was extended) and the
 * usage of each model version, FAILED with `code`/`message`, and `UNKNOWN` for ids that are
 * unknown or expired. Also the messages of the failure codes a task may end with.
 */
import { dashScopeErrorForStatus, INVALID_PARAMETER_MESSAGE } from "../dashscope-errors.ts";
import { pickWords } from "../deterministic-text.ts";
import { stripDirectives } from "../faults.ts";
import type { LinkSigner } from "../signed-links.ts";
import type { VideoSpec } from "./video-frames.ts";
import { signVideoUrl } from "./video-results.ts";
import { formatTaskTime, type TaskFailure, type TaskView, type VideoTask } from "./video-tasks.ts";
import type { WanJob } from "./wan-request.ts";

/**
 * A Wan job as its task keeps it: the request's job less its media links (an inline `data:` URI
 * can be megabytes; a task needs none once its video's seed is drawn), and the video it gives.
 */
export interface WanTaskJob extends Omit<WanJob, "media" | "lateFailure"> {
  video: VideoSpec;
}

/** Result links live 24 h from the end of the task (§3.4). */
export const WAN_RESULT_TTL_MS = 24 * 60 * 60 * 1000;

const FAILURE_MESSAGES: Record<string, string> = {
  InvalidParameter: INVALID_PARAMETER_MESSAGE,
  DataInspectionFailed: "Output data may contain inappropriate content.",
  "InvalidParameter.DataInspection":
    "Download the media resource timed out during the data inspection process.",
  InternalError: dashScopeErrorForStatus(500).message,
  "InternalError.Algo": "An internal error has occurred during algorithm execution.",
  "InternalError.Timeout": "An internal timeout error has occured during execution.",
  "Throttling.AllocationQuota": "Allocated quota exceeded, please increase your quota limit.",
};

/** A task failure with DashScope's message for `code` (a generic one for other codes). */
export function wanFailure(code: string): TaskFailure {
  return { code, message: FAILURE_MESSAGES[code] ?? `Sandbox fault ${code}.` };
}

export const MODERATION_FAILURE = wanFailure("DataInspectionFailed");

/** The prompt the vendor's rewriter would have run: the user's, extended deterministically. */
export function actualPrompt(job: WanTaskJob): string {
  const [first, second] = pickWords(job.video.seed, 2);
  const prompt = stripDirectives(job.prompt ?? "")
    .replace(/\s+/g, " ")
    .trim();
  const lead = prompt || "The subject of the reference image comes to life.";
  return (
    `${lead} Cinematic shot with ${first} and ${second} tones, soft natural light, ` +
    "smooth steady camera motion and fine detail."
  );
}

function usage(job: WanTaskJob) {
  if (job.model.version === "2.5") {
    return { video_duration: job.duration, video_count: 1, SR: job.tier, video_ratio: job.size };
  }
  return {
    duration: job.inputVideoSeconds + job.duration,
    input_video_duration: job.inputVideoSeconds,
    output_video_duration: job.duration,
    video_count: 1,
    SR: job.tier,
    ratio: job.ratio,
  };
}

export function unknownTaskBody(taskId: string, requestId: string) {
  return { request_id: requestId, output: { task_id: taskId, task_status: "UNKNOWN" } };
}

export interface ResultHost {
  origin: string;
  links: LinkSigner;
  nowMs: number;
}

/** The poll answer for a task that is not expired. */
export function wanTaskBody(
  task: VideoTask<WanTaskJob>,
  view: TaskView,
  requestId: string,
  host: ResultHost,
) {
  if (view.phase === "EXPIRED") return unknownTaskBody(task.id, requestId);
  const times = {
    submit_time: formatTaskTime(task.submittedMs),
    ...(view.scheduledMs === undefined ? {} : { scheduled_time: formatTaskTime(view.scheduledMs) }),
    ...(view.endMs === undefined ? {} : { end_time: formatTaskTime(view.endMs) }),
  };
  const output = { task_id: task.id, task_status: view.phase, ...times };
  const failure = task.plan.failure;
  if (view.phase === "FAILED" && failure) {
    return {
      request_id: requestId,
      output: { ...output, code: failure.code, message: failure.message },
    };
  }
  if (view.phase !== "SUCCEEDED") return { request_id: requestId, output };
  const { job } = task;
  const ttlSeconds = Math.max(1, Math.floor((task.endMs + WAN_RESULT_TTL_MS - host.nowMs) / 1000));
  return {
    request_id: requestId,
    output: {
      ...output,
      ...(job.prompt === undefined ? {} : { orig_prompt: job.prompt }),
      ...(job.promptExtend ? { actual_prompt: actualPrompt(job) } : {}),
      video_url: signVideoUrl(host.origin, job.video, ttlSeconds, host.links),
    },
    usage: usage(job),
  };
}
