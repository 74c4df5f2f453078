/**
 * @module providers/xai/xai-video-model
 * Video adapter for xAI's deferred video API (adapter `xai-video`): `POST /videos/generations`
 * with the body built from the client's fields and `model` set to the upstream model answers a
 * `request_id`; the task is read with `GET /videos/{request_id}` (`read-xai-video.ts`). xAI has
 * no cancel call, so there is no `cancel`.
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
import { getUpstream, postUpstream, readJsonObject } from "../kit/upstream-call.ts";
import { videoRequestBody } from "../kit/video-request.ts";
import { readXaiVideo, type XaiVideoBody } from "./read-xai-video.ts";
import { readXaiError } from "./xai-error.ts";

export const GENERATIONS_PATH = "/videos/generations";

export interface XaiVideoConfig {
  baseUrl: string;
  apiKey: string;
  http: HttpClient;
}

function readRequestId(body: Record<string, unknown>): string {
  const id = body.request_id;
  // Encoded into the poll's path, where `.` and `..` would still poll another address of the
  // vendor's API with the key.
  if (typeof id === "string" && id !== "" && id.length <= 256 && !/^\.+$/.test(id)) return id;
  throw new UpstreamError({
    kind: "protocol",
    message: "xAI accepted the video request without a usable request_id.",
    body,
  });
}

export class XaiVideoModel implements VideoModel {
  readonly #config: XaiVideoConfig;

  constructor(config: XaiVideoConfig) {
    this.#config = config;
  }

  async submit(options: VideoSubmitOptions): Promise<VideoSubmission> {
    const url = `${this.#config.baseUrl}${GENERATIONS_PATH}`;
    const response = await postUpstream(this.#config.http, url, {
      headers: {
        authorization: `Bearer ${this.#config.apiKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(videoRequestBody(options)),
      signal: options.abortSignal,
      // The submission answers at once: a body that never ends must not hold the request.
      totalDeadline: true,
      readError: readXaiError,
    });
    const submission = await readJsonObject(response, options.abortSignal, (body) => ({
      providerTaskId: readRequestId(body),
      providerRecord: body,
    }));
    const upstreamRequestId = headerValue(response.headers, "x-request-id");
    return { ...submission, ...(upstreamRequestId ? { upstreamRequestId } : {}) };
  }

  async poll(options: VideoPollOptions): Promise<VideoTaskState> {
    const url = `${this.#config.baseUrl}/videos/${encodeURIComponent(options.providerTaskId)}`;
    const response = await getUpstream(this.#config.http, url, {
      headers: { authorization: `Bearer ${this.#config.apiKey}` },
      signal: options.abortSignal,
      readError: readXaiError,
    });
    return readJsonObject(response, options.abortSignal, (body) =>
      readXaiVideo(body as XaiVideoBody),
    );
  }
}
