/**
 * @module sandbox/video/video-test-kit
 * Helpers for the video tests: an MP4 reader written apart from the muxer (it walks the boxes
 * and the sample tables the way a demuxer does, so a muxer bug cannot hide behind shared code),
 * ffprobe when the machine has it, and moving the sandbox clock. Used only by `*.test.ts` files.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Box {
  type: string;
  /** Offset of the box's payload in the file. */
  start: number;
  /** Payload length. */
  size: number;
  children: Box[];
}

const CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "dinf", "stbl", "edts"]);

/** The boxes of `bytes[from, to)`, descending into the container boxes. */
export function readBoxes(bytes: Uint8Array, from = 0, to = bytes.length): Box[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const boxes: Box[] = [];
  let offset = from;
  while (offset + 8 <= to) {
    let size = view.getUint32(offset);
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8));
    let header = 8;
    if (size === 1) {
      size = Number(view.getBigUint64(offset + 8));
      header = 16;
    } else if (size === 0) {
      size = to - offset;
    }
    if (size < header || offset + size > to) throw new Error(`box ${type} overruns its parent`);
    const start = offset + header;
    const children = CONTAINERS.has(type) ? readBoxes(bytes, start, offset + size) : [];
    boxes.push({ type, start, size: size - header, children });
    offset += size;
  }
  if (offset !== to) throw new Error("trailing bytes after the last box");
  return boxes;
}

/** The box at a path of types, e.g. `find(boxes, "moov", "trak", "tkhd")`. */
export function find(boxes: Box[], ...path: string[]): Box {
  const [first, ...rest] = path;
  const box = boxes.find((candidate) => candidate.type === first);
  if (!box) throw new Error(`no ${first} box`);
  return rest.length === 0 ? box : find(box.children, ...rest);
}

/** A descriptor's tag, and where its payload starts and ends (lengths are 7 bits a byte). */
function descriptorAt(bytes: Uint8Array, at: number) {
  let length = 0;
  let cursor = at + 1;
  for (let i = 0; i < 4; i++) {
    const byte = bytes[cursor++] ?? 0;
    length = (length << 7) | (byte & 0x7f);
    if ((byte & 0x80) === 0) break;
  }
  return { tag: bytes[at], start: cursor, end: cursor + length };
}

/** The ObjectTypeIndication of an ES_Descriptor's DecoderConfigDescriptor. */
function decoderObjectType(esDescriptor: Uint8Array): number | undefined {
  const es = descriptorAt(esDescriptor, 0);
  if (es.tag !== 0x03) return undefined;
  const flags = esDescriptor[es.start + 2] ?? 0;
  let at = es.start + 3;
  if (flags & 0x80) at += 2; // dependsOn_ES_ID
  if (flags & 0x40) at += 1 + (esDescriptor[at] ?? 0); // URL
  if (flags & 0x20) at += 2; // OCR_ES_Id
  const config = descriptorAt(esDescriptor, at);
  return config.tag === 0x04 ? esDescriptor[config.start] : undefined;
}

export interface Mp4Facts {
  brands: string[];
  /** Top-level box types in order. */
  layout: string[];
  movieDurationSeconds: number;
  mediaDurationSeconds: number;
  width: number;
  height: number;
  handler: string;
  sampleEntry: string;
  /** ObjectTypeIndication in the `esds` DecoderConfigDescriptor. */
  objectType: number | undefined;
  /** Each sample's bytes, located through stsc/stco/stsz as a demuxer does. */
  samples: Uint8Array[];
  sampleDurations: number[];
}

export function readMp4(bytes: Uint8Array): Mp4Facts {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (at: number) => view.getUint32(at);
  const text = (at: number, length = 4) => String.fromCharCode(...bytes.subarray(at, at + length));
  const boxes = readBoxes(bytes);
  const ftyp = find(boxes, "ftyp");
  const brands = [text(ftyp.start)];
  for (let at = ftyp.start + 8; at < ftyp.start + ftyp.size; at += 4) brands.push(text(at));
  const mvhd = find(boxes, "moov", "mvhd");
  const trak = ["moov", "trak"];
  const tkhd = find(boxes, ...trak, "tkhd");
  const mdhd = find(boxes, ...trak, "mdia", "mdhd");
  const hdlr = find(boxes, ...trak, "mdia", "hdlr");
  const stbl = [...trak, "mdia", "minf", "stbl"];
  const stsd = find(boxes, ...stbl, "stsd");
  const stts = find(boxes, ...stbl, "stts");
  const stsc = find(boxes, ...stbl, "stsc");
  const stsz = find(boxes, ...stbl, "stsz");
  const stco = find(boxes, ...stbl, "stco");
  // Version 0 headers: mvhd/mdhd timescale at +12, duration at +16; tkhd size at +76/+80.
  const entryStart = stsd.start + 8;
  const entryType = text(entryStart + 4);
  const entryEnd = entryStart + u32(entryStart);
  // A VisualSampleEntry's own fields take 78 bytes after its 8-byte header; boxes follow.
  const esds = readBoxes(bytes, entryStart + 86, entryEnd).find((box) => box.type === "esds");
  const objectType = esds
    ? decoderObjectType(bytes.subarray(esds.start + 4, esds.start + esds.size))
    : undefined;
  const durations: number[] = [];
  for (let i = 0, n = u32(stts.start + 4); i < n; i++) {
    const at = stts.start + 8 + i * 8;
    for (let k = 0; k < u32(at); k++) durations.push(u32(at + 4));
  }
  const sizes: number[] = [];
  const fixed = u32(stsz.start + 4);
  for (let i = 0, n = u32(stsz.start + 8); i < n; i++) {
    sizes.push(fixed || u32(stsz.start + 12 + i * 4));
  }
  const chunkOffsets: number[] = [];
  for (let i = 0, n = u32(stco.start + 4); i < n; i++)
    chunkOffsets.push(u32(stco.start + 8 + i * 4));
  const runs: Array<{ first: number; perChunk: number }> = [];
  for (let i = 0, n = u32(stsc.start + 4); i < n; i++) {
    runs.push({ first: u32(stsc.start + 8 + i * 12), perChunk: u32(stsc.start + 12 + i * 12) });
  }
  const samples: Uint8Array[] = [];
  chunkOffsets.forEach((offset, chunkIndex) => {
    const run = runs.filter((candidate) => candidate.first <= chunkIndex + 1).at(-1);
    let at = offset;
    for (let k = 0; k < (run?.perChunk ?? 0) && samples.length < sizes.length; k++) {
      const size = sizes[samples.length] ?? 0;
      samples.push(bytes.subarray(at, at + size));
      at += size;
    }
  });
  return {
    brands,
    layout: boxes.map((box) => box.type),
    movieDurationSeconds: u32(mvhd.start + 16) / u32(mvhd.start + 12),
    mediaDurationSeconds: u32(mdhd.start + 16) / u32(mdhd.start + 12),
    width: u32(tkhd.start + 76) / 0x10000,
    height: u32(tkhd.start + 80) / 0x10000,
    handler: text(hdlr.start + 8),
    sampleEntry: entryType,
    objectType,
    samples,
    sampleDurations: durations,
  };
}

/** True when an `ffprobe` command runs on this machine. */
export function hasFfprobe(): boolean {
  try {
    execFileSync("ffprobe", ["-version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface ProbeResult {
  codec: string;
  width: number;
  height: number;
  durationSeconds: number;
  frames: number;
}

/** ffprobe's reading of the file (stream 0); throws when ffprobe reports an error. */
export function ffprobe(bytes: Uint8Array): ProbeResult {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-video-"));
  try {
    const path = join(dir, "video.mp4");
    writeFileSync(path, bytes);
    const out = execFileSync(
      "ffprobe",
      [
        "-v",
        "error",
        "-count_frames",
        "-show_entries",
        "format=duration:stream=codec_name,width,height,nb_read_frames",
        "-of",
        "json",
        path,
      ],
      { encoding: "utf8" },
    );
    const json = JSON.parse(out) as {
      streams: Array<{ codec_name: string; width: number; height: number; nb_read_frames: string }>;
      format: { duration: string };
    };
    const stream = json.streams[0];
    if (!stream) throw new Error("ffprobe found no stream");
    return {
      codec: stream.codec_name,
      width: stream.width,
      height: stream.height,
      durationSeconds: Number(json.format.duration),
      frames: Number(stream.nb_read_frames),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Moves the sandbox clock forward. */
export async function advanceClock(baseUrl: string, seconds: number): Promise<void> {
  const response = await fetch(`${baseUrl}/__sandbox/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
  if (response.status !== 200) throw new Error(`clock: ${response.status}`);
}
