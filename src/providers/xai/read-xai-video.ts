/**
 * @module providers/xai/read-xai-video
 * Reads the body of an xAI video poll (`GET /videos/{request_id}`) into the normalized
 * {@link VideoTaskState}. `pending` is queued until the vendor reports some progress, then
 * running; `done` is succeeded with `video.url` and `video.duration`, except that a `done`
 * whose video was withheld by moderation (`respect_moderation: false` and no url) is a failure,
 * and so is one whose link no client can fetch (not http(s), or to a link-local or cloud
 * metadata address: `invalid_result_link`);
 * `failed` carries xAI's error; `expired` is expired.
 */
import { UpstreamError, type VideoTaskState } from "../../spec/index.ts";
import { judgeResultLink, type ResultLinkVerdict } from "../kit/result-link.ts";
import { readXaiErrorFields } from "./xai-error.ts";

export interface XaiVideoBody {
  status?: unknown;
  progress?: unknown;
  video?: { url?: unknown; duration?: unknown; respect_moderation?: unknown };
  /** A failed task's error: `{code, message}`, or a message with the code beside it. */
  error?: unknown;
  code?: unknown;
  usage?: unknown;
}

/** The code a video withheld by xAI's moderation fails with. */
export const MODERATION_CODE = "moderation_blocked";

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Progress as 0–100, or undefined when the vendor gave no number. */
function progressOf(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  return Math.min(100, Math.max(0, value));
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

function protocolError(message: string, body: XaiVideoBody): UpstreamError {
  return new UpstreamError({ kind: "protocol", message, body });
}

/** xAI's code and message for a failed or expired task, when it gave any. */
function vendorError(body: XaiVideoBody): VideoTaskState["error"] {
  const { code, message } = readXaiErrorFields(body);
  if (code === undefined && message === undefined) return undefined;
  return { code: code ?? "unknown", message: message ?? code ?? "" };
}

const LINK_PROBLEMS: Record<Exclude<ResultLinkVerdict, "ok">, string> = {
  not_web_link: "xAI reported the video done with a result that is not an http(s) link.",
  unreachable_address:
    "xAI reported the video done with a link to an address no client can fetch (link-local, cloud metadata, or another that is not routed).",
};

export function readXaiVideo(body: XaiVideoBody): VideoTaskState {
  const progress = progressOf(body.progress);
  const state = {
    providerRecord: body,
    ...(progress !== undefined ? { progress } : {}),
    ...(body.usage !== undefined ? { usage: body.usage } : {}),
  };
  switch (body.status) {
    case "pending":
      return { ...state, status: progress ? "running" : "queued" };
    case "done": {
      const videoUrl = nonEmpty(body.video?.url);
      // The spec promises a downloadable link: anything but http(s) (an error text, `file:`,
      // `javascript:`), or a link to an address no client reaches (169.254.169.254), is a
      // failed task, released, not a video handed on and charged.
      const verdict = videoUrl === undefined ? "ok" : judgeResultLink(videoUrl);
      if (verdict !== "ok") {
        return {
          ...state,
          status: "failed",
          error: { code: "invalid_result_link", message: LINK_PROBLEMS[verdict] },
        };
      }
      if (videoUrl !== undefined) {
        const durationSeconds = positive(body.video?.duration);
        return {
          ...state,
          status: "succeeded",
          videoUrl,
          ...(durationSeconds !== undefined ? { durationSeconds } : {}),
        };
      }
      if (body.video?.respect_moderation === false) {
        return {
          ...state,
          status: "failed",
          error: {
            code: MODERATION_CODE,
            message: "xAI withheld the generated video: it did not pass moderation.",
          },
        };
      }
      throw protocolError("xAI reported the video done without video.url.", body);
    }
    case "failed":
      return {
        ...state,
        status: "failed",
        error: vendorError(body) ?? {
          code: "unknown",
          message: "xAI reported the video generation failed without a code or message.",
        },
      };
    case "expired": {
      const error = vendorError(body);
      return { ...state, status: "expired", ...(error ? { error } : {}) };
    }
    default:
      throw protocolError(
        `xAI answered the video poll with an unknown status ${JSON.stringify(body.status)}.`,
        body,
      );
  }
}
