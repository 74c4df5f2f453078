/**
 * @module sandbox/audio-wav
 * 16-bit PCM in and out of WAV files for the sandbox (pure): the file DashScope's result host
 * serves, and the samples of the WAV espeak-ng writes (whose sizes say "stream").
 */

/** A complete mono 16-bit WAV file with exact sizes. */
export function wavFile(samples: Int16Array, sampleRate: number): Buffer {
  const dataBytes = samples.length * 2;
  const file = Buffer.alloc(44 + dataBytes);
  file.write("RIFF", 0, "ascii");
  file.writeUInt32LE(36 + dataBytes, 4);
  file.write("WAVEfmt ", 8, "ascii");
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20);
  file.writeUInt16LE(1, 22);
  file.writeUInt32LE(sampleRate, 24);
  file.writeUInt32LE(sampleRate * 2, 28);
  file.writeUInt16LE(2, 32);
  file.writeUInt16LE(16, 34);
  file.write("data", 36, "ascii");
  file.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples.length; i++) file.writeInt16LE(samples[i] ?? 0, 44 + 2 * i);
  return file;
}

/** The samples and rate of a 16-bit mono WAV; sizes past the end of the bytes are clipped. */
export function readWavSamples(file: Buffer): { samples: Int16Array; sampleRate: number } {
  if (file.length < 12 || file.toString("ascii", 0, 4) !== "RIFF") {
    throw new Error("not a WAV file");
  }
  let sampleRate = 0;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = file.toString("ascii", offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    if (id === "fmt ") sampleRate = file.readUInt32LE(offset + 12);
    if (id === "data") {
      const start = offset + 8;
      const end = Math.min(file.length, start + size);
      const samples = new Int16Array(Math.floor((end - start) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = file.readInt16LE(start + 2 * i);
      return { samples, sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error("WAV file without data");
}

/** Linear-interpolation resampling (good enough for test speech). */
export function resample(samples: Int16Array, from: number, to: number): Int16Array {
  if (from === to || samples.length === 0) return samples;
  const out = new Int16Array(Math.max(1, Math.round((samples.length * to) / from)));
  const step = from / to;
  for (let i = 0; i < out.length; i++) {
    const position = i * step;
    const index = Math.floor(position);
    const a = samples[Math.min(index, samples.length - 1)] ?? 0;
    const b = samples[Math.min(index + 1, samples.length - 1)] ?? 0;
    out[i] = Math.round(a + (b - a) * (position - index));
  }
  return out;
}

/** Little-endian bytes of the samples (the wire form of DashScope's PCM). */
export function pcmBytes(samples: Int16Array): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i] ?? 0, 2 * i);
  return bytes;
}
