/**
 * @module providers/images
 * Builds (once per route) the image adapter for a route, by the route's adapter name: `dashscope`
 * (Qwen-Image, `pictor-*`) and `openai-images` (GPT-image and DALL·E 2, `imgmodel-*`,
 * `legacy-img-2`).
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { ImageModel } from "../spec/index.ts";
import { DashScopeImageModel } from "./dashscope/dashscope-image-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { perRoute } from "./kit/per-route.ts";
import { OpenAIImagesModel } from "./openai-images/openai-images-model.ts";

export function createImageModels(
  http: HttpClient,
): (route: ResolvedRoute) => ImageModel | undefined {
  return perRoute<ImageModel>(http, (route, config) => {
    if (route.adapter === "dashscope") return new DashScopeImageModel(config);
    if (route.adapter === "openai-images") return new OpenAIImagesModel(config);
    return undefined;
  });
}
