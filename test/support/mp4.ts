/**
 * @module test/support/mp4
 * Parses a video file with GPAC's MP4 parser (the `mp4box` package), as a client's player would:
 * the movie's duration, its video track's codec and picture size, and its sample count.
 */
import { createFile, MP4BoxBuffer } from "mp4box";

export interface Mp4Summary {
  durationSeconds: number;
  codec: string;
  width: number;
  height: number;
  samples: number;
}

export function parseMp4(bytes: Uint8Array): Mp4Summary {
  const file = createFile();
  let summary: Mp4Summary | undefined;
  let failure: unknown;
  file.onError = (_module: string, message: string) => {
    failure = new Error(message);
  };
  file.onReady = (info) => {
    const track = info.videoTracks[0] ?? info.tracks[0];
    if (!track) return;
    summary = {
      durationSeconds: info.duration / info.timescale,
      codec: track.codec,
      width: track.video?.width ?? track.track_width,
      height: track.video?.height ?? track.track_height,
      samples: track.nb_samples,
    };
  };
  const copy = new Uint8Array(bytes).buffer;
  file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, 0));
  file.flush();
  if (failure) throw failure;
  if (!summary) throw new Error("not an MP4 file the parser could read");
  return summary;
}
