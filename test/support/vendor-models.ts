/**
 * @module test/support/vendor-models
 * Catalog entries of models served by a test's own stand-in vendor (a fake OpenAI, a
 * misbehaving DashScope speech host), and a gateway in front of a fake OpenAI, for the tests
 * that script what the vendor answers.
 */
import { type FakeVendor, startFakeVendor } from "./fake-vendor.ts";
import { startTestGateway, type TestGateway } from "./gateway-harness.ts";

/** `rogue-gpt`: a chat model whose one route is an `openai` vendor at `baseUrl` (native Responses). */
export function fakeOpenAIChatModel(baseUrl: string) {
  return {
    id: "rogue-gpt",
    endpoint: "chat",
    family: "gpt-4o",
    display_name: "GPT on a fake OpenAI",
    owned_by: "self-hosted",
    capabilities: { streaming: true, tools: true, vision: true, max_output_tokens: 1000 },
    pricing: { per_1m_tokens: { input: 2_500_000, output: 10_000_000 } },
    routes: [
      {
        vendor: "openai",
        adapter: "openai-compatible",
        base_url: baseUrl,
        upstream_model: "gpt-4o",
        credential_env: "ROGUE_OPENAI_KEY",
      },
    ],
  };
}

/** A gateway whose model `rogue-gpt` is served by a fake OpenAI the test scripts. */
export async function gatewayOnFakeOpenAI(): Promise<{
  gateway: TestGateway;
  vendor: FakeVendor;
  close(): Promise<void>;
}> {
  const vendor = await startFakeVendor();
  const gateway = await startTestGateway({
    env: { ROGUE_OPENAI_KEY: "sk-rogue" },
    config: { catalog: { models: [fakeOpenAIChatModel(vendor.url)] } },
  });
  return {
    gateway,
    vendor,
    async close() {
      await gateway.close();
      await vendor.close();
    },
  };
}

/** A Qwen3-TTS-style speech model whose one route is DashScope at `baseUrl`. */
export function dashScopeSpeechModel(id: string, baseUrl: string, per10kCharacters: number) {
  return {
    id,
    endpoint: "speech",
    family: "tts3",
    display_name: `Speech on a misbehaving vendor (${id})`,
    owned_by: "self-hosted",
    capabilities: { voices: ["Cherry"], audio_formats: ["mp3", "wav"], instructions: false },
    pricing: { per_10k_characters: per10kCharacters },
    routes: [
      {
        vendor: "rogue",
        adapter: "dashscope",
        base_url: baseUrl,
        upstream_model: "qwen3-tts-flash",
      },
    ],
  };
}

/**
 * A Grok-Imagine-style video model (`xai-video` adapter) whose one route is a test's own vendor
 * at `baseUrl`: 480p, 16:9, priced `perSecond` micro-USD a second of video.
 */
export function xaiVideoModel(
  id: string,
  baseUrl: string,
  options: { perSecond: number; durations?: number[]; upstreamModel?: string },
) {
  return {
    id,
    endpoint: "video",
    family: "gen-video",
    display_name: `Video on a test's own vendor (${id})`,
    owned_by: "self-hosted",
    capabilities: {
      resolutions: ["480p"],
      durations: options.durations ?? [1, 2, 3],
      aspect_ratios: ["16:9"],
      video_input: "t2v+i2v",
    },
    pricing: { per_video_second: { "480p": options.perSecond } },
    routes: [
      {
        vendor: "test-vendor",
        adapter: "xai-video",
        base_url: baseUrl,
        upstream_model: options.upstreamModel ?? "g",
      },
    ],
  };
}

/**
 * A Qwen-Image-style `pictor` model (`dashscope` adapter, text to image at 1024*1024) whose one
 * route is a test's own vendor at `baseUrl`, priced `perImage` micro-USD a picture.
 */
export function pictorModel(id: string, baseUrl: string, options: { perImage: number }) {
  return {
    id,
    endpoint: "image-generation",
    family: "pictor",
    display_name: `Pictor on a test's own vendor (${id})`,
    owned_by: "self-hosted",
    capabilities: { sizes: ["1024*1024"], reference_images: { min: 0, max: 0 } },
    pricing: { per_image: { default: options.perImage } },
    routes: [
      {
        vendor: "test-vendor",
        adapter: "dashscope",
        base_url: baseUrl,
        upstream_model: "qwen-image",
      },
    ],
  };
}
