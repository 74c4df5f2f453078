/**
 * @module providers/images
 * Builds (and caches) the image adapter for a route, by the route's adapter name: `dashscope`
 * (Qwen-Image, `pictor-*`) and `openai-images` (GPT-image and DALL·E 2, `imgmodel-*`,
 * `legacy-img-2`).
 */
import type { ResolvedRoute } from "../catalog/index.ts";
import type { ImageModel } from "../spec/index.ts";
import { DashScopeImageModel } from "./dashscope/dashscope-image-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { OpenAIImagesModel } from "./openai-images/openai-images-model.ts";

export function createImageModels(
  http: HttpClient,
): (route: ResolvedRoute) => ImageModel | undefined {
  const models = new Map<string, ImageModel>();
  return (route) => {
    if (route.adapter !== "dashscope" && route.adapter !== "openai-images") return undefined;
    const cacheKey = `${route.adapter} ${route.baseUrl} ${route.apiKey} ${JSON.stringify(route.timeouts ?? {})}`;
    let model = models.get(cacheKey);
    if (!model) {
      const config = {
        baseUrl: route.baseUrl,
        apiKey: route.apiKey,
        http: route.timeouts ? http.withTimeouts(route.timeouts) : http,
        provider: route.vendor,
      };
      model =
        route.adapter === "dashscope"
          ? new DashScopeImageModel(config)
          : new OpenAIImagesModel(config);
      models.set(cacheKey, model);
    }
    return model;
  };
}
