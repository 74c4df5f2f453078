/**
 * @module providers/videos
 * Builds (once per route) the video adapter for a route, by the route's adapter name:
 * `dashscope` (Wan, `motion*`) and `xai-video` (Grok Imagine Video, `gen-video*`).
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { VideoModel } from "../spec/index.ts";
import { DashScopeVideoModel } from "./dashscope/dashscope-video-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { perRoute } from "./kit/per-route.ts";
import { XaiVideoModel } from "./xai/xai-video-model.ts";

export function createVideoModels(
  http: HttpClient,
): (route: ResolvedRoute) => VideoModel | undefined {
  return perRoute<VideoModel>(http, (route, config) => {
    if (route.adapter === "dashscope") return new DashScopeVideoModel(config);
    if (route.adapter === "xai-video") return new XaiVideoModel(config);
    return undefined;
  });
}
