/**
 * @module providers/openai-compatible/openai-embedding-response
 * Reads the OpenAI-shaped embedding list `{data:[{index, embedding}], usage}` that OpenAI,
 * DashScope compatible mode and Voyage all answer: vectors put in `index` order, base64 float32
 * strings decoded, and any mismatch with the inputs sent (a count, an index, a vector that is
 * not all finite numbers) reported as a protocol error.
 */
import { UpstreamError } from "../../spec/index.ts";
import { usableVector } from "../kit/usable-vector.ts";

/** Little-endian float32 values of a base64 string; undefined when it is not whole floats. */
export function decodeFloat32Base64(text: string): number[] | undefined {
  const bytes = Buffer.from(text, "base64");
  if (bytes.length % 4 !== 0) return undefined;
  const values: number[] = [];
  for (let offset = 0; offset + 4 <= bytes.length; offset += 4)
    values.push(bytes.readFloatLE(offset));
  return values;
}

function protocolError(message: string, body: unknown): UpstreamError {
  return new UpstreamError({ kind: "protocol", message, body });
}

/** One vector per input, in input order, from `data[]`; throws when the list does not fit. */
export function readEmbeddingList(body: unknown, count: number): number[][] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== count) {
    throw protocolError(
      `Upstream answered ${Array.isArray(data) ? data.length : "no"} embeddings for ${count} inputs.`,
      body,
    );
  }
  const vectors: Array<number[] | undefined> = new Array(count);
  data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
    const index = item?.index === undefined ? position : item.index;
    const raw = item?.embedding;
    const vector = typeof raw === "string" ? decodeFloat32Base64(raw) : raw;
    if (
      !usableVector(vector) ||
      typeof index !== "number" ||
      !Number.isInteger(index) ||
      index < 0 ||
      index >= count ||
      vectors[index] !== undefined
    )
      throw protocolError(`Upstream answered an invalid embedding at position ${position}.`, body);
    vectors[index] = vector;
  });
  // Every position filled once (`count` items, none twice): no hole is left.
  return vectors as number[][];
}
