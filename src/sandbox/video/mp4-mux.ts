/**
 * @module sandbox/video/mp4-mux
 * A minimal ISO-BMFF (MP4) muxer for one Motion-JPEG video track: `ftyp`, then `moov` (so a
 * player can start before the end: "fast start"), then one `mdat` holding the frames as a single
 * chunk. The sample entry is `mp4v` with an `esds` whose ObjectTypeIndication is 0x6C (JPEG,
 * ISO/IEC 10918-1), which ffmpeg reads as `mjpeg` and mp4box.js as `mp4v` with OTI 0x6C. Every frame is a
 * sync sample (no `stss`), all frames last the same time (one `stts` entry). Pure: bytes in,
 * bytes out.
 */

export interface MotionJpegTrack {
  width: number;
  height: number;
  /** The JPEG files, one per frame, in display order. */
  frames: readonly Uint8Array[];
  /** How long each frame shows, in milliseconds (1000 = one frame per second). */
  frameMs: number;
}

/** Ticks per second of the movie and the media: milliseconds. */
export const TIMESCALE = 1000;
/** ObjectTypeIndication of JPEG in the MPEG-4 Systems registry. */
export const JPEG_OBJECT_TYPE = 0x6c;

/** The identity transformation matrix every header carries (16.16 and 2.30 fixed point). */
const MATRIX = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];

function u8(value: number): Uint8Array {
  return Uint8Array.of(value & 0xff);
}

function u16(value: number): Uint8Array {
  const bytes = new Uint8Array(2);
  new DataView(bytes.buffer).setUint16(0, value);
  return bytes;
}

function u32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value >>> 0);
  return bytes;
}

function zeros(count: number): Uint8Array {
  return new Uint8Array(count);
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0) & 0x7f);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A box: 32-bit size, four-character type, payload. */
function box(type: string, ...payload: Uint8Array[]): Uint8Array {
  const body = concat(payload);
  return concat([u32(8 + body.length), ascii(type), body]);
}

/** A full box: a box whose payload starts with a version byte and 24 bits of flags. */
function fullBox(type: string, version: number, flags: number, ...payload: Uint8Array[]) {
  return box(type, u8(version), u8(flags >> 16), u16(flags & 0xffff), ...payload);
}

/** An MPEG-4 descriptor (tag, one-byte length: every descriptor here is shorter than 128). */
function descriptor(tag: number, ...payload: Uint8Array[]): Uint8Array {
  const body = concat(payload);
  if (body.length > 127) throw new RangeError("descriptor too long for a one-byte length");
  return concat([u8(tag), u8(body.length), body]);
}

function matrix(): Uint8Array {
  return concat(MATRIX.map(u32));
}

/** The elementary stream descriptor: JPEG frames, with the buffer and bit rates they need. */
function esds(track: MotionJpegTrack): Uint8Array {
  const { frames, frameMs } = track;
  const largest = frames.reduce((max, frame) => Math.max(max, frame.length), 0);
  const total = frames.reduce((sum, frame) => sum + frame.length, 0);
  const averageBitrate = Math.round((total * 8 * 1000) / (frames.length * frameMs));
  const maxBitrate = Math.round((largest * 8 * 1000) / frameMs);
  const decoderConfig = descriptor(
    0x04,
    u8(JPEG_OBJECT_TYPE),
    u8((0x04 << 2) | 1), // streamType 4 (visual), upStream 0, reserved 1
    concat([u8(largest >> 16), u16(largest & 0xffff)]), // bufferSizeDB, 24 bits
    u32(maxBitrate),
    u32(averageBitrate),
  );
  const slConfig = descriptor(0x06, u8(0x02)); // predefined: MP4 file
  const esDescriptor = descriptor(0x03, u16(1), u8(0), decoderConfig, slConfig);
  return fullBox("esds", 0, 0, esDescriptor);
}

function sampleEntry(track: MotionJpegTrack): Uint8Array {
  const compressor = zeros(32);
  const name = ascii("Motion JPEG");
  compressor[0] = name.length;
  compressor.set(name, 1);
  return box(
    "mp4v",
    zeros(6), // SampleEntry reserved
    u16(1), // data_reference_index
    zeros(16), // pre_defined, reserved, pre_defined[3]
    u16(track.width),
    u16(track.height),
    u32(0x00480000), // 72 dpi
    u32(0x00480000),
    u32(0), // reserved
    u16(1), // frame_count
    compressor,
    u16(0x0018), // depth: colour, no alpha
    u16(0xffff), // pre_defined = -1
    esds(track),
  );
}

function sampleTable(track: MotionJpegTrack, chunkOffset: number): Uint8Array {
  const count = track.frames.length;
  return box(
    "stbl",
    fullBox("stsd", 0, 0, u32(1), sampleEntry(track)),
    fullBox("stts", 0, 0, u32(1), u32(count), u32(track.frameMs)),
    fullBox("stsc", 0, 0, u32(1), u32(1), u32(count), u32(1)),
    fullBox("stsz", 0, 0, u32(0), u32(count), ...track.frames.map((frame) => u32(frame.length))),
    fullBox("stco", 0, 0, u32(1), u32(chunkOffset)),
  );
}

function movie(track: MotionJpegTrack, chunkOffset: number): Uint8Array {
  const durationMs = track.frames.length * track.frameMs;
  const mvhd = fullBox(
    "mvhd",
    0,
    0,
    u32(0), // creation_time
    u32(0), // modification_time
    u32(TIMESCALE),
    u32(durationMs),
    u32(0x00010000), // rate 1.0
    u16(0x0100), // volume 1.0
    zeros(10),
    matrix(),
    zeros(24),
    u32(2), // next_track_ID
  );
  const tkhd = fullBox(
    "tkhd",
    0,
    0x000003, // enabled, in movie
    u32(0),
    u32(0),
    u32(1), // track_ID
    u32(0),
    u32(durationMs),
    zeros(8),
    u16(0), // layer
    u16(0), // alternate_group
    u16(0), // volume: 0 for video
    u16(0),
    matrix(),
    u32(track.width * 0x10000),
    u32(track.height * 0x10000),
  );
  const mdhd = fullBox(
    "mdhd",
    0,
    0,
    u32(0),
    u32(0),
    u32(TIMESCALE),
    u32(durationMs),
    u16(0x55c4), // language "und"
    u16(0),
  );
  const hdlr = fullBox("hdlr", 0, 0, u32(0), ascii("vide"), zeros(12), ascii("VideoHandler\0"));
  const dinf = box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1)));
  const minf = box("minf", fullBox("vmhd", 0, 1, zeros(8)), dinf, sampleTable(track, chunkOffset));
  return box("moov", mvhd, box("trak", tkhd, box("mdia", mdhd, hdlr, minf)));
}

/** The MP4 file of the track. */
export function muxMotionJpeg(track: MotionJpegTrack): Buffer {
  const { width, height, frames, frameMs } = track;
  if (frames.length === 0) throw new RangeError("a video needs at least one frame");
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`bad frame size ${width}x${height}`);
  if (width > 0xffff || height > 0xffff || !Number.isInteger(frameMs) || frameMs < 1)
    throw new RangeError("frame size or frame duration out of range");
  const ftyp = box("ftyp", ascii("isom"), u32(0x200), ascii("isom"), ascii("iso2"), ascii("mp41"));
  // `moov` has the same length whatever the offset it records, so measure it once with 0.
  const moovLength = movie(track, 0).length;
  const mdatHeader = 8;
  const moov = movie(track, ftyp.length + moovLength + mdatHeader);
  const mdat = box("mdat", ...frames);
  return Buffer.from(concat([ftyp, moov, mdat]));
}
