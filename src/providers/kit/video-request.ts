/**
 * @module providers/kit/video-request
 * The body every video adapter submits: the vendor-shaped body it was given, with `model` first
 * and always the route's upstream model (a `model` inside the given body never wins).
 */
import type { VideoSubmitOptions } from "../../spec/index.ts";

export function videoRequestBody(options: VideoSubmitOptions): Record<string, unknown> {
  const { model: _replaced, ...body } = options.body;
  return { model: options.upstreamModel, ...body };
}
