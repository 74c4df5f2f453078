/**
 * @module mcp/tools/video-tools
 * `generate_video` submits a video task through the same core as `POST /v1/videos/generations`
 * (the task holds its own money and settles when it ends) and can wait for it, sending progress
 * notifications when the client asked for them; `get_video_task` reads one of the caller's
 * tasks, the same body as `GET /v1/videos/generations/{id}`.
 */
import { Type } from "@sinclair/typebox";
import { GatewayError } from "../../errors/index.ts";
import type { VideoTask } from "../../store/index.ts";
import { renderVideoTask } from "../../tasks/index.ts";
import {
  defineTool,
  runEndpoint,
  structuredResult,
  type ToolContext,
  withAnswerMeta,
} from "../tool.ts";

const FINAL = new Set(["succeeded", "failed", "canceled", "expired"]);
const MAX_WAIT_SECONDS = 600;
const POLL_MS = 1000;

const TaskOutput = Type.Object({
  id: Type.String(),
  status: Type.String(),
  model: Type.String(),
  progress: Type.Union([Type.Number(), Type.Null()]),
  content: Type.Union([Type.Object({ video_url: Type.String() }), Type.Null()]),
  billing: Type.Object({
    state: Type.String(),
    cost_micros: Type.Union([Type.Integer(), Type.Null()]),
  }),
});

async function ownTask(context: ToolContext, id: string): Promise<VideoTask> {
  const task = await context.services.store.findVideoTask(context.caller.accountId, id);
  if (!task) throw new GatewayError("task_not_found", { id: id.slice(0, 200) });
  return task;
}

/** The task's body, with its video as a resource link once there is one, and a note. */
function taskResult(task: VideoTask, note?: string) {
  const body = renderVideoTask(task);
  return structuredResult(body, [
    ...(note ? [{ type: "text" as const, text: note }] : []),
    ...(task.videoUrl
      ? [
          {
            type: "resource_link" as const,
            uri: task.videoUrl,
            name: `${task.id}.mp4`,
            mimeType: "video/mp4",
          },
        ]
      : []),
  ]);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

export const generateVideoTool = defineTool({
  name: "generate_video",
  title: "Generate a video (task)",
  description:
    "Start a video generation task (motion-* or gen-video* models). Video takes minutes: the result is the task (id, status); read it later with get_video_task, or pass wait: true to wait up to wait_seconds (progress notifications are sent when the request carries a progress token). Billed per second of video when the task succeeds; a failed task costs nothing.",
  input: Type.Object(
    {
      model: Type.String(),
      prompt: Type.String({ minLength: 1, maxLength: 5000 }),
      duration: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 600, description: "Seconds; billed." }),
      ),
      resolution: Type.Optional(Type.String({ description: "480p, 720p or 1080p; billed." })),
      aspect_ratio: Type.Optional(Type.String()),
      image_url: Type.Optional(
        Type.String({ description: "First frame (gen-video models): a public https URL." }),
      ),
      wait: Type.Optional(Type.Boolean({ description: "Wait for the task to end." })),
      wait_seconds: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_WAIT_SECONDS, description: "Default 120." }),
      ),
    },
    { additionalProperties: false },
  ),
  output: TaskOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, context) {
    const { wait, wait_seconds: waitSeconds, prompt, image_url: imageUrl, ...common } = args;
    const family = context.services.catalog.resolve(
      args.model,
      context.caller.key.modelAliases,
    )?.family;
    const body =
      family === "motion"
        ? { ...common, input: { prompt } }
        : { ...common, prompt, ...(imageUrl ? { image: { url: imageUrl } } : {}) };
    const answer = await runEndpoint(context, "/v1/videos/generations", body);
    const id = (answer.body as { id: string }).id;
    let task = await ownTask(context, id);
    if (wait && !FINAL.has(task.status)) {
      // The wait is a request in flight of the key: it takes a slot (and a request of the
      // minute) like any other. Refused, the task comes back unwaited: it runs and holds its
      // money whether or not this call waits for it.
      const lease = await waitLease(context);
      if (!lease.taken) return withAnswerMeta(taskResult(task, lease.note), answer);
      try {
        const deadline = Date.now() + (waitSeconds ?? 120) * 1000;
        while (!FINAL.has(task.status) && Date.now() < deadline && !context.signal.aborted) {
          await context.progress(task.progress ?? 0, 100, `video task ${task.status}`);
          await sleep(POLL_MS, context.signal);
          task = await ownTask(context, id);
        }
      } finally {
        lease.release();
      }
      if (FINAL.has(task.status)) await context.progress(100, 100, `video task ${task.status}`);
    }
    return withAnswerMeta(taskResult(task), answer);
  },
});

/** The key's quota lease for a wait, or why the quotas refused it. */
async function waitLease(
  context: ToolContext,
): Promise<{ taken: true; release(): void } | { taken: false; note: string }> {
  try {
    const lease = await context.services.quotas.acquire(
      context.caller.key,
      `${context.requestId}:wait`,
    );
    return { taken: true, release: () => lease.release() };
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status !== 429) throw error;
    return {
      taken: false,
      note: `Not waited: ${error.message} The task runs on; read it with get_video_task.`,
    };
  }
}

export const getVideoTaskTool = defineTool({
  name: "get_video_task",
  title: "Read a video task",
  description:
    "Read one of your video tasks by id (vtask_…): status, progress, the video URL once it succeeded, and what it was billed.",
  input: Type.Object(
    { id: Type.String({ minLength: 1, maxLength: 200 }) },
    { additionalProperties: false },
  ),
  output: TaskOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(args, context) {
    return taskResult(await ownTask(context, args.id));
  },
});
