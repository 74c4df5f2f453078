/**
 * @module sandbox/video/wan-models
 * The Wan video models the sandbox knows (protocol reference §3) and their fixed tables: the
 * `W*H` sizes of each resolution tier with their aspect ratios, the `media[]` type combinations
 * of wan2.7-i2v, and the ratios of wan2.7. Dated wan2.7 snapshots (`wan2.7-i2v-2026-04-25`) are
 * the same model.
 */

export type WanVersion = "2.5" | "2.6" | "2.7";
export type WanMode = "t2v" | "i2v" | "r2v";

export interface WanModel {
  name: string;
  version: WanVersion;
  mode: WanMode;
}

const KNOWN: Record<string, { version: WanVersion; mode: WanMode }> = {
  "wan2.5-t2v-preview": { version: "2.5", mode: "t2v" },
  "wan2.5-i2v-preview": { version: "2.5", mode: "i2v" },
  "wan2.6-t2v": { version: "2.6", mode: "t2v" },
  "wan2.6-i2v": { version: "2.6", mode: "i2v" },
  "wan2.6-i2v-flash": { version: "2.6", mode: "i2v" },
  "wan2.6-r2v": { version: "2.6", mode: "r2v" },
  "wan2.6-r2v-flash": { version: "2.6", mode: "r2v" },
  "wan2.7-t2v": { version: "2.7", mode: "t2v" },
  "wan2.7-i2v": { version: "2.7", mode: "i2v" },
  "wan2.7-r2v": { version: "2.7", mode: "r2v" },
};

const SNAPSHOT = /^(wan2\.7-(?:t2v|i2v|r2v))-\d{4}-\d{2}-\d{2}$/;

/** The model of that name, or undefined when the sandbox does not serve it. */
export function wanModel(name: string): WanModel | undefined {
  const base = SNAPSHOT.exec(name)?.[1] ?? name;
  const known = Object.hasOwn(KNOWN, base) ? KNOWN[base] : undefined;
  return known ? { name, ...known } : undefined;
}

/** Output lines per tier, as usage `SR` reports them. */
export type Tier = 480 | 720 | 1080;

export const TIER_NAMES: Record<string, Tier> = { "480P": 480, "720P": 720, "1080P": 1080 };

/** The sizes of each tier and their aspect ratios (Wan 2.5 list, §3.1; 2.6 drops 480P). */
export const SIZES: Record<Tier, Record<string, string>> = {
  480: { "832*480": "16:9", "480*832": "9:16", "624*624": "1:1" },
  720: {
    "1280*720": "16:9",
    "720*1280": "9:16",
    "960*960": "1:1",
    "1088*832": "4:3",
    "832*1088": "3:4",
  },
  1080: {
    "1920*1080": "16:9",
    "1080*1920": "9:16",
    "1440*1440": "1:1",
    "1632*1248": "4:3",
    "1248*1632": "3:4",
  },
};

/** The ratios wan2.7 accepts (`parameters.ratio`). */
export const RATIOS = ["16:9", "9:16", "1:1", "4:3", "3:4"] as const;

export const DEFAULT_SIZE = "1920*1080";

/** The size of `tier` in that ratio, or the tier's size nearest to it. */
export function sizeFor(tier: Tier, ratio: string): string {
  const sizes = Object.entries(SIZES[tier]);
  const exact = sizes.find(([, shape]) => shape === ratio);
  if (exact) return exact[0];
  return nearestSize(tier, ratioValue(ratio));
}

/** `"16:9"` → 1.777…; `"1920*1080"` → 1.777…. */
export function ratioValue(shape: string): number {
  const [width, height] = shape.split(/[:*]/).map(Number);
  return (width ?? 1) / (height ?? 1);
}

/** The size of `tier` whose aspect is nearest to `aspect` (width / height). */
export function nearestSize(tier: Tier, aspect: number): string {
  let best = DEFAULT_SIZE;
  let distance = Number.POSITIVE_INFINITY;
  for (const size of Object.keys(SIZES[tier])) {
    const gap = Math.abs(Math.log(ratioValue(size) / aspect));
    if (gap < distance) [best, distance] = [size, gap];
  }
  return best;
}

/** The tier of a size, if it is one of the listed sizes. */
export function tierOfSize(size: string): Tier | undefined {
  for (const tier of [480, 720, 1080] as const) {
    if (Object.hasOwn(SIZES[tier], size)) return tier;
  }
  return undefined;
}

/** wan2.7-i2v's `media[].type` values and the combinations it accepts (§3.3). */
export const I2V_MEDIA_TYPES = ["first_frame", "last_frame", "driving_audio", "first_clip"];
export const I2V_COMBINATIONS: readonly string[][] = [
  ["first_frame"],
  ["first_frame", "driving_audio"],
  ["first_frame", "last_frame"],
  ["first_frame", "last_frame", "driving_audio"],
  ["first_clip"],
  ["first_clip", "last_frame"],
];

/** wan2.7-r2v's `media[].type` values; at most {@link R2V_MAX_REFERENCES} references. */
export const R2V_MEDIA_TYPES = ["reference_image", "reference_video", "first_frame"];
export const R2V_MAX_REFERENCES = 5;
/** wan2.6-r2v's `reference_urls` (the reference gives no count; the sandbox takes up to 5). */
export const R2V_MAX_REFERENCE_URLS = 5;

/**
 * Seconds the sandbox counts for each input video (`first_clip`, `reference_video`, a video in
 * `reference_urls`) in `usage.input_video_duration`: inputs are never downloaded.
 */
export const INPUT_VIDEO_SECONDS = 3;
