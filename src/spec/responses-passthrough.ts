/**
 * @module spec/responses-passthrough
 * The native route of `/v1/responses`: an upstream that serves OpenAI's Responses API itself
 * receives the request (model mapped, the conversation already expanded, `store: false`) and
 * its Response or events come back as they are, with the usage read on the way.
 */
import type {
  PassthroughCall,
  PassthroughEvent,
  PassthroughResult,
  PassthroughStream,
} from "./messages-passthrough.ts";

export interface ResponsesPassthroughModel {
  readonly specificationVersion: "switchyard-responses-passthrough-1";
  create(call: PassthroughCall): Promise<PassthroughResult>;
  /**
   * Events until the terminal one (`response.completed`, `.incomplete` or `.failed`), as the
   * arrays each read of the upstream's body completed (in order, never empty).
   */
  stream(call: PassthroughCall): Promise<PassthroughStream<PassthroughEvent[]>>;
}
