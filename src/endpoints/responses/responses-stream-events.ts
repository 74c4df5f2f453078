/**
 * @module endpoints/responses/responses-stream-events
 * Turns normalized chat stream parts into the Responses API's semantic events (pure), each a
 * named frame whose data repeats the name in `type` and carries `sequence_number` (0, 1, 2, …):
 * `response.created` → `response.in_progress` → per output item, one at a time:
 * - reasoning text: `output_item.added` (`summary: []`) → `reasoning_summary_part.added` →
 *   `reasoning_summary_text.delta`… → `reasoning_summary_text.done` →
 *   `reasoning_summary_part.done` → `output_item.done`;
 * - text: `output_item.added` (message) → `content_part.added` (`output_text`) →
 *   `output_text.delta`… → `output_text.done` → `content_part.done` → `output_item.done`;
 * - a tool call: `output_item.added` (`function_call`, `arguments: ""`) →
 *   `function_call_arguments.delta`… → `function_call_arguments.done` → `output_item.done`;
 * then the terminal `response.completed` (or `response.incomplete` for a cut answer) with the
 * full snapshot. An upstream break ends with `error` (the nested form OpenAI sends) and
 * `response.failed`. Item ids stay the same from `.added` to the final snapshot; no `[DONE]`.
 */
import type { StreamFrame } from "../../core/operation.ts";
import type { ChatFinishReason, ChatStreamPart } from "../../spec/index.ts";
import {
  functionCallItem,
  messageItem,
  type OutputItem,
  outputTextPart,
  type ResponseObject,
  reasoningItem,
  responseStatus,
  responsesId,
} from "./build-responses-response.ts";

type OpenItem =
  | { kind: "reasoning"; index: number; id: string; text: string }
  | { kind: "message"; index: number; id: string; text: string }
  | { kind: "call"; index: number; id: string; callId: string; name: string; text: string };

export class ResponsesStreamWriter {
  #sequence = 0;
  readonly #output: OutputItem[] = [];
  #open: OpenItem | undefined;
  /** The open or closed function-call item of each tool call, by the call's stream index. */
  readonly #calls = new Map<number, Extract<OpenItem, { kind: "call" }>>();
  readonly #skeleton: ResponseObject;

  constructor(skeleton: ResponseObject) {
    this.#skeleton = skeleton;
  }

  #frame(type: string, data: Record<string, unknown>): StreamFrame {
    return { event: type, data: { type, sequence_number: this.#sequence++, ...data } };
  }

  /** The output items closed so far, in order. */
  get output(): OutputItem[] {
    return [...this.#output];
  }

  get hasToolCalls(): boolean {
    return this.#calls.size > 0;
  }

  start(): StreamFrame[] {
    return [
      this.#frame("response.created", { response: this.#skeleton }),
      this.#frame("response.in_progress", { response: this.#skeleton }),
    ];
  }

  #added(item: OutputItem, index: number): StreamFrame {
    return this.#frame("response.output_item.added", { output_index: index, item });
  }

  #openReasoning(): StreamFrame[] {
    const item = {
      kind: "reasoning" as const,
      index: this.#output.length,
      id: responsesId("rs"),
      text: "",
    };
    this.#output.push({ id: item.id, type: "reasoning", summary: [] });
    this.#open = item;
    return [
      this.#added({ id: item.id, type: "reasoning", summary: [] }, item.index),
      this.#frame("response.reasoning_summary_part.added", {
        item_id: item.id,
        output_index: item.index,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      }),
    ];
  }

  #openMessage(): StreamFrame[] {
    const item = {
      kind: "message" as const,
      index: this.#output.length,
      id: responsesId("msg"),
      text: "",
    };
    const added = messageItem(item.id, "", "in_progress");
    this.#output.push(added);
    this.#open = item;
    return [
      this.#added(added, item.index),
      this.#frame("response.content_part.added", {
        item_id: item.id,
        output_index: item.index,
        content_index: 0,
        part: outputTextPart(""),
      }),
    ];
  }

  /** The frames one stream part adds (none for a `finish`, which the operation reads). */
  part(part: ChatStreamPart): StreamFrame[] {
    // The Responses API has one answer per request: other choices are not delivered.
    if ("choice" in part && part.choice !== undefined && part.choice !== 0) return [];
    switch (part.type) {
      case "reasoning-delta": {
        if (!part.delta) return [];
        const frames =
          this.#open?.kind === "reasoning" ? [] : [...this.close(), ...this.#openReasoning()];
        const open = this.#open as Extract<OpenItem, { kind: "reasoning" }>;
        open.text += part.delta;
        frames.push(
          this.#frame("response.reasoning_summary_text.delta", {
            item_id: open.id,
            output_index: open.index,
            summary_index: 0,
            delta: part.delta,
          }),
        );
        return frames;
      }
      case "text-delta": {
        if (!part.delta) return [];
        const frames =
          this.#open?.kind === "message" ? [] : [...this.close(), ...this.#openMessage()];
        const open = this.#open as Extract<OpenItem, { kind: "message" }>;
        open.text += part.delta;
        frames.push(
          this.#frame("response.output_text.delta", {
            item_id: open.id,
            output_index: open.index,
            content_index: 0,
            delta: part.delta,
            logprobs: [],
          }),
        );
        return frames;
      }
      case "tool-call-start": {
        const frames = this.close();
        const item = {
          kind: "call" as const,
          index: this.#output.length,
          id: responsesId("fc"),
          callId: part.id,
          name: part.name,
          text: "",
        };
        const added = functionCallItem(
          item.id,
          { id: part.id, name: part.name, arguments: "" },
          "in_progress",
        );
        this.#output.push(added);
        this.#calls.set(part.index, item);
        this.#open = item;
        frames.push(this.#added(added, item.index));
        return frames;
      }
      case "tool-call-delta": {
        const call = this.#calls.get(part.index);
        if (!call || !part.argumentsDelta) return [];
        call.text += part.argumentsDelta;
        // A call already closed (an upstream interleaving parallel calls) keeps its item.
        this.#output[call.index] = { ...this.#output[call.index]!, arguments: call.text };
        return [
          this.#frame("response.function_call_arguments.delta", {
            item_id: call.id,
            output_index: call.index,
            delta: part.argumentsDelta,
          }),
        ];
      }
      default:
        return [];
    }
  }

  /** Closes the open item; `finishReason` decides a message's status at the end. */
  close(finishReason: ChatFinishReason = "stop"): StreamFrame[] {
    const open = this.#open;
    if (!open) return [];
    this.#open = undefined;
    const at = { item_id: open.id, output_index: open.index };
    switch (open.kind) {
      case "reasoning": {
        const item = reasoningItem(open.id, open.text);
        this.#output[open.index] = item;
        return [
          this.#frame("response.reasoning_summary_text.done", {
            ...at,
            summary_index: 0,
            text: open.text,
          }),
          this.#frame("response.reasoning_summary_part.done", {
            ...at,
            summary_index: 0,
            part: { type: "summary_text", text: open.text },
          }),
          this.#frame("response.output_item.done", { output_index: open.index, item }),
        ];
      }
      case "message": {
        const item = messageItem(open.id, open.text, responseStatus(finishReason).status);
        this.#output[open.index] = item;
        return [
          this.#frame("response.output_text.done", {
            ...at,
            content_index: 0,
            text: open.text,
            logprobs: [],
          }),
          this.#frame("response.content_part.done", {
            ...at,
            content_index: 0,
            part: outputTextPart(open.text),
          }),
          this.#frame("response.output_item.done", { output_index: open.index, item }),
        ];
      }
      case "call": {
        const item = functionCallItem(
          open.id,
          { id: open.callId, name: open.name, arguments: open.text },
          "completed",
        );
        this.#output[open.index] = item;
        return [
          this.#frame("response.function_call_arguments.done", {
            ...at,
            name: open.name,
            arguments: open.text,
          }),
          this.#frame("response.output_item.done", { output_index: open.index, item }),
        ];
      }
    }
  }

  /** The terminal event: `response.completed`, or `response.incomplete` for a cut answer. */
  terminal(response: ResponseObject): StreamFrame {
    const type = response.status === "incomplete" ? "response.incomplete" : "response.completed";
    return this.#frame(type, { response });
  }

  /** An upstream break: the `error` event, then `response.failed` with what was delivered. */
  failed(error: unknown): StreamFrame[] {
    const message =
      error instanceof Error && error.message ? error.message : "Upstream stream failed.";
    const failure = { code: "server_error", message };
    return [
      this.#frame("error", {
        error: { type: "server_error", code: "server_error", message, param: null },
      }),
      this.#frame("response.failed", {
        response: { ...this.#skeleton, status: "failed", error: failure, output: this.output },
      }),
    ];
  }
}
