/**
 * @module providers/dashscope/read-dashscope-task
 * Reads the body of a DashScope task poll (`GET /tasks/{id}`) into the normalized
 * {@link VideoTaskState}: the status, the finished video's link, the seconds DashScope bills
 * (`usage.duration` on Wan 2.6/2.7, else `video_duration` (2.5), else `output_video_duration`),
 * the seed, and a FAILED task's `code`/`message`, which DashScope reports inside a 200 answer.
 * A SUCCEEDED task whose link no client can fetch is a failed one (`invalid_result_link`).
 */
import { UpstreamError, type VideoTaskState } from "../../spec/index.ts";
import { judgeResultLink } from "../kit/result-link.ts";
import { type DashScopeErrorBody, dashScopeErrorFromBody } from "./dashscope-error.ts";
import { mapDashScopeTaskStatus } from "./map-dashscope-task-status.ts";

export interface DashScopeTaskBody extends DashScopeErrorBody {
  output?: {
    task_id?: unknown;
    task_status?: unknown;
    video_url?: unknown;
    seed?: unknown;
    code?: unknown;
    message?: unknown;
  };
  parameters?: { seed?: unknown };
  usage?: Record<string, unknown>;
}

/** The usage fields holding the billed seconds, in the order they are trusted. */
const DURATION_FIELDS = ["duration", "video_duration", "output_video_duration"] as const;

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function seedOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The seconds of video DashScope reports, from the first usage field that holds a positive number. */
export function readDashScopeDuration(
  usage: Record<string, unknown> | undefined,
): number | undefined {
  for (const field of DURATION_FIELDS) {
    const seconds = positive(usage?.[field]);
    if (seconds !== undefined) return seconds;
  }
  return undefined;
}

function protocolError(message: string, body: DashScopeTaskBody): UpstreamError {
  return new UpstreamError({
    kind: "protocol",
    message,
    body,
    upstreamRequestId: nonEmpty(body.request_id),
  });
}

/** The vendor's code and message, or undefined when it gave neither. */
function vendorError(output: DashScopeTaskBody["output"]): VideoTaskState["error"] {
  const code = nonEmpty(output?.code);
  const message = nonEmpty(output?.message);
  if (code === undefined && message === undefined) return undefined;
  return { code: code ?? "unknown", message: message ?? code ?? "" };
}

export function readDashScopeTask(body: DashScopeTaskBody): VideoTaskState {
  if (body.output === undefined || body.output === null) {
    if (nonEmpty(body.code)) throw dashScopeErrorFromBody(body);
    throw protocolError("DashScope answered the task poll without an output.", body);
  }
  const { output } = body;
  const status = mapDashScopeTaskStatus(output.task_status);
  if (status === undefined) {
    throw protocolError(
      `DashScope answered with an unknown task status ${JSON.stringify(output.task_status)}.`,
      body,
    );
  }
  const state: VideoTaskState = {
    status,
    providerRecord: body,
    ...(body.usage !== undefined ? { usage: body.usage } : {}),
  };
  switch (status) {
    case "succeeded": {
      const videoUrl = nonEmpty(output.video_url);
      if (videoUrl === undefined) {
        throw protocolError(
          "DashScope reported the task SUCCEEDED without output.video_url.",
          body,
        );
      }
      // A link no client can fetch (not http(s), or to a link-local or cloud metadata
      // address) is a failed task, released, not a video handed on and charged.
      const verdict = judgeResultLink(videoUrl);
      if (verdict !== "ok") {
        return {
          ...state,
          status: "failed",
          error: {
            code: "invalid_result_link",
            message:
              verdict === "not_web_link"
                ? "DashScope reported the task SUCCEEDED with a result that is not an http(s) link."
                : "DashScope reported the task SUCCEEDED with a link to an address no client can fetch (link-local, cloud metadata, or another that is not routed).",
          },
        };
      }
      const durationSeconds = readDashScopeDuration(body.usage);
      const seed = seedOf(output.seed) ?? seedOf(body.parameters?.seed);
      return {
        ...state,
        videoUrl,
        ...(durationSeconds !== undefined ? { durationSeconds } : {}),
        ...(seed !== undefined ? { seed } : {}),
      };
    }
    case "failed":
      return {
        ...state,
        error: vendorError(output) ?? {
          code: "unknown",
          message: "DashScope reported the task FAILED without a code or message.",
        },
      };
    case "canceled":
    case "expired": {
      const error = vendorError(output);
      return error ? { ...state, error } : state;
    }
    default:
      return state;
  }
}
