import { describe, expect, it } from "vitest";
import type { AdapterName, ResolvedRoute } from "../catalog/index.ts";
import { DashScopeVideoModel } from "./dashscope/dashscope-video-model.ts";
import type { HttpClient } from "./kit/http-client.ts";
import { createProviderRegistry } from "./registry.ts";
import { createVideoModels } from "./videos.ts";
import { XaiVideoModel } from "./xai/xai-video-model.ts";

const http: HttpClient = {
  post: async () => {
    throw new Error("no calls in this test");
  },
  get: async () => {
    throw new Error("no calls in this test");
  },
  download: () => Promise.reject(new Error("no downloads here")),
  withTimeouts: () => http,
  close: async () => {},
};

function route(adapter: AdapterName): ResolvedRoute {
  return {
    vendor: adapter,
    adapter,
    baseUrl: "http://vendor/v1",
    apiKey: "k",
    upstreamModel: "m",
    weight: 1,
    sandbox: false,
  };
}

describe("createVideoModels", () => {
  it("builds DashScope's adapter for dashscope and xAI's for xai-video, once per route", () => {
    const videoModel = createVideoModels(http);
    const dashscope = route("dashscope");
    expect(videoModel(dashscope)).toBeInstanceOf(DashScopeVideoModel);
    expect(videoModel(dashscope)).toBe(videoModel(dashscope));
    expect(videoModel(route("xai-video"))).toBeInstanceOf(XaiVideoModel);
  });

  it("has no video adapter for the other protocols", () => {
    const videoModel = createVideoModels(http);
    for (const adapter of [
      "openai-compatible",
      "anthropic",
      "gemini",
      "voyage",
      "openai-images",
    ] as const) {
      expect(videoModel(route(adapter)), adapter).toBeUndefined();
    }
  });
});

describe("the registry and video", () => {
  it("serves video on the video adapters only, and nothing else on xai-video", () => {
    const registry = createProviderRegistry(http);
    expect(registry.serves("video", route("dashscope"))).toBe(true);
    expect(registry.serves("video", route("xai-video"))).toBe(true);
    expect(registry.serves("video", route("openai-compatible"))).toBe(false);
    expect(registry.serves("video", route("openai-images"))).toBe(false);
    for (const kind of ["chat", "embedding", "speech", "image-generation"] as const) {
      expect(registry.serves(kind, route("xai-video")), kind).toBe(false);
    }
  });
});
