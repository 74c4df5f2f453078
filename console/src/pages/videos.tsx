/**
 * @module console/pages/videos
 * The account's video tasks with their status, cost and, for finished ones, a player.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import type { List } from "../types.ts";
import { Badge, Empty, Money, Notice, Page, useLoad, When } from "../ui.tsx";

interface VideoTask {
  id: string;
  model: string;
  status: string;
  progress?: number;
  created_at: number;
  finished_at: number | null;
  duration?: number;
  resolution?: string;
  content?: { video_url?: string } | null;
  error?: { code?: string; message?: string } | null;
  billing?: { cost_micros?: number; held_micros?: number; state?: string };
}

/** The account's video tasks, newest first (a session may read them). */
function listVideos(): Promise<List<VideoTask>> {
  return api<List<VideoTask>>("/v1/videos/generations", { query: { limit: 50 } });
}

function statusTone(status: string): "ok" | "warn" | "bad" | "info" {
  if (status === "succeeded") return "ok";
  if (status === "failed" || status === "expired" || status === "canceled") return "bad";
  return "info";
}

export function VideosPage() {
  const videos = useLoad(listVideos, []);
  const [playing, setPlaying] = useState<VideoTask | undefined>();
  const tasks = videos.data?.data ?? [];
  return (
    <Page
      title="Videos"
      actions={
        <button type="button" class="secondary" onClick={videos.reload}>
          Refresh
        </button>
      }
    >
      <Notice error={videos.error} />
      {playing?.content?.video_url ? (
        <figure class="card player">
          {/* biome-ignore lint/a11y/useMediaCaption: generated videos come without captions */}
          <video
            controls
            src={playing.content.video_url}
            preload="metadata"
            width={640}
            height={360}
          />
          <figcaption>
            {playing.model} · <code>{playing.id}</code>
          </figcaption>
        </figure>
      ) : null}
      {tasks.length === 0 && !videos.loading ? (
        <Empty>
          No video tasks yet. Submit one with POST /v1/videos/generations and it appears here.
        </Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Video tasks, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Model</th>
                <th scope="col">Status</th>
                <th scope="col">Submitted</th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((task) => (
                <tr key={task.id}>
                  <td>
                    <code>{task.id}</code>
                    {task.error?.message ? <div class="muted">{task.error.message}</div> : null}
                  </td>
                  <td>{task.model}</td>
                  <td>
                    <Badge tone={statusTone(task.status)}>
                      {task.status}
                      {task.progress !== undefined && task.status === "running"
                        ? ` ${task.progress}%`
                        : ""}
                    </Badge>
                  </td>
                  <td>
                    <When at={task.created_at} />
                  </td>
                  <td class="num">
                    {task.billing?.cost_micros !== undefined ? (
                      <Money micros={task.billing.cost_micros} />
                    ) : (
                      "—"
                    )}
                  </td>
                  <td>
                    {task.status === "succeeded" && task.content?.video_url ? (
                      <button type="button" class="small" onClick={() => setPlaying(task)}>
                        Play
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
