/**
 * @module providers/dashscope/dashscope-video-model
 * Video adapter for Wan on DashScope's asynchronous task protocol: the create call on
 * `video-synthesis` with `X-DashScope-Async: enable` answers a `task_id`; the task is read with
 * `GET /tasks/{id}` (only the `Authorization` header) and cancelled, while still PENDING, with
 * `POST /tasks/{id}/cancel`. The request body is already DashScope's own (`input`,
 * `parameters`); the adapter only sets `model`. Reading a poll is `read-dashscope-task.ts`.
 */
import {
  UpstreamError,
  type VideoModel,
  type VideoPollOptions,
  type VideoSubmission,
  type VideoSubmitOptions,
  type VideoTaskState,
} from "../../spec/index.ts";
import { type HttpClient, headerValue } from "../kit/http-client.ts";
import { getUpstream, postUpstream, readBodyText, readJsonObject } from "../kit/upstream-call.ts";
import { videoRequestBody } from "../kit/video-request.ts";
import {
  type DashScopeErrorBody,
  dashScopeErrorFromBody,
  readDashScopeError,
} from "./dashscope-error.ts";
import { type DashScopeTaskBody, readDashScopeTask } from "./read-dashscope-task.ts";

export const VIDEO_PATH = "/services/aigc/video-generation/video-synthesis";

export interface DashScopeVideoConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
}

/** Reads the create answer's `output.task_id`; an error envelope at 200 is the vendor's error. */
export function readSubmission(body: DashScopeTaskBody): VideoSubmission {
  const taskId = body.output?.task_id;
  if (typeof taskId === "string" && taskId !== "") {
    return {
      providerTaskId: taskId,
      providerRecord: body,
      ...(typeof body.request_id === "string" ? { upstreamRequestId: body.request_id } : {}),
    };
  }
  if (typeof body.code === "string" && body.code !== "") throw dashScopeErrorFromBody(body);
  throw new UpstreamError({
    kind: "protocol",
    message: "DashScope accepted the video task without an output.task_id.",
    body,
    upstreamRequestId: body.request_id,
  });
}

export class DashScopeVideoModel implements VideoModel {
  readonly #config: DashScopeVideoConfig;

  constructor(config: DashScopeVideoConfig) {
    this.#config = config;
  }

  get #auth(): { authorization: string } {
    return { authorization: `Bearer ${this.#config.apiKey}` };
  }

  #taskUrl(providerTaskId: string): string {
    return `${this.#config.baseUrl}/tasks/${encodeURIComponent(providerTaskId)}`;
  }

  async submit(options: VideoSubmitOptions): Promise<VideoSubmission> {
    const response = await postUpstream(this.#config.http, `${this.#config.baseUrl}${VIDEO_PATH}`, {
      headers: {
        ...this.#auth,
        "content-type": "application/json",
        "x-dashscope-async": "enable",
      },
      body: JSON.stringify(videoRequestBody(options)),
      signal: options.abortSignal,
      // The create call answers at once: a body that never ends must not hold the request.
      totalDeadline: true,
      readError: readDashScopeError,
    });
    const submission = await readJsonObject(response, options.abortSignal, (body) =>
      readSubmission(body as DashScopeTaskBody),
    );
    const upstreamRequestId =
      submission.upstreamRequestId ?? headerValue(response.headers, "x-request-id");
    return { ...submission, ...(upstreamRequestId ? { upstreamRequestId } : {}) };
  }

  async poll(options: VideoPollOptions): Promise<VideoTaskState> {
    const response = await getUpstream(this.#config.http, this.#taskUrl(options.providerTaskId), {
      headers: this.#auth,
      signal: options.abortSignal,
      readError: readDashScopeError,
    });
    return readJsonObject(response, options.abortSignal, (body) =>
      readDashScopeTask(body as DashScopeTaskBody),
    );
  }

  /** Only a PENDING task can be cancelled; DashScope refuses the others with its error envelope. */
  async cancel(options: VideoPollOptions): Promise<void> {
    const response = await postUpstream(
      this.#config.http,
      `${this.#taskUrl(options.providerTaskId)}/cancel`,
      { headers: this.#auth, body: "", signal: options.abortSignal, readError: readDashScopeError },
    );
    const text = await readBodyText(response, options.abortSignal);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return; // The answer's status is what counts; an empty or non-JSON 2xx body is accepted.
    }
    const { code } = (body ?? {}) as DashScopeErrorBody;
    if (typeof code === "string" && code !== "")
      throw dashScopeErrorFromBody(body as DashScopeErrorBody);
  }
}
