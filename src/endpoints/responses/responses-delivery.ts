/**
 * @module endpoints/responses/responses-delivery
 * What the events of a native Responses stream delivered, for billing an abort or a break. A
 * vendor streams a text as deltas and then repeats it whole (`output_text.done`,
 * `content_part.done`, `output_item.done`), or, misbehaving, sends it whole only (in an
 * `output_item.added`, a `.done` event): each text is kept by where it lives (item, content or
 * summary part, arguments), and counted up to the longest of what its deltas and its whole
 * copies carried, so a text is counted once however it came.
 */

/** Where delivered text goes: its text, and whether it is reasoning. */
export type AddDelivered = (text: string, reasoning: boolean) => void;

/** Events whose `delta` is delivered text, with the field a whole text of their part is in. */
const DELTAS: Record<string, { reasoning: boolean; part: (data: Fields) => string }> = {
  "response.output_text.delta": { reasoning: false, part: (data) => contentKey(data) },
  "response.refusal.delta": { reasoning: false, part: (data) => contentKey(data) },
  "response.function_call_arguments.delta": {
    reasoning: false,
    part: (data) => argumentsKey(data),
  },
  "response.reasoning_summary_text.delta": { reasoning: true, part: (data) => summaryKey(data) },
  "response.reasoning_text.delta": { reasoning: true, part: (data) => reasoningKey(data) },
};

type Fields = Record<string, unknown>;

const itemOf = (data: Fields) => (typeof data.item_id === "string" ? data.item_id : "");
const indexOf = (value: unknown) => (typeof value === "number" ? value : 0);
const contentKey = (data: Fields) => `${itemOf(data)}/c${indexOf(data.content_index)}`;
const argumentsKey = (data: Fields) => `${itemOf(data)}/a`;
const summaryKey = (data: Fields) => `${itemOf(data)}/s${indexOf(data.summary_index)}`;
const reasoningKey = (data: Fields) => `${itemOf(data)}/r${indexOf(data.content_index)}`;

const asFields = (value: unknown): Fields | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Fields)
    : undefined;

/** The text of a message's content part (`output_text` or `refusal`). */
const partText = (part: Fields | undefined) =>
  part ? (typeof part.text === "string" ? part.text : part.refusal) : undefined;

export class ResponsesDelivery {
  /** Characters of each text counted so far, by where it lives. */
  readonly #counted = new Map<string, number>();
  /** Characters of each text its deltas carried so far. */
  readonly #streamed = new Map<string, number>();
  readonly #add: AddDelivered;

  constructor(add: AddDelivered) {
    this.#add = add;
  }

  /** Counts what one upstream event delivered. */
  note(event: string, data: Fields): void {
    const delta = DELTAS[event];
    if (delta) {
      if (typeof data.delta !== "string" || data.delta.length === 0) return;
      const key = delta.part(data);
      // Deltas build the text from its start: count only what reaches past what was counted
      // (a text sent whole before its deltas is counted once).
      const from = this.#streamed.get(key) ?? 0;
      const to = from + data.delta.length;
      this.#streamed.set(key, to);
      const counted = this.#counted.get(key) ?? 0;
      if (to <= counted) return;
      this.#counted.set(key, to);
      this.#add(counted > from ? data.delta.slice(counted - from) : data.delta, delta.reasoning);
      return;
    }
    switch (event) {
      case "response.output_text.done":
        this.#whole(contentKey(data), data.text, false);
        break;
      case "response.refusal.done":
        this.#whole(contentKey(data), data.refusal, false);
        break;
      case "response.content_part.added":
      case "response.content_part.done":
        this.#whole(contentKey(data), partText(asFields(data.part)), false);
        break;
      case "response.function_call_arguments.done":
        this.#whole(argumentsKey(data), data.arguments, false);
        break;
      case "response.reasoning_summary_text.done":
        this.#whole(summaryKey(data), data.text, true);
        break;
      case "response.reasoning_summary_part.added":
      case "response.reasoning_summary_part.done":
        this.#whole(summaryKey(data), asFields(data.part)?.text, true);
        break;
      case "response.reasoning_text.done":
        this.#whole(reasoningKey(data), data.text, true);
        break;
      case "response.output_item.added":
      case "response.output_item.done":
        this.#item(asFields(data.item));
        break;
    }
  }

  /** An output item sent whole: a message's parts, a call's name and arguments, reasoning. */
  #item(item: Fields | undefined): void {
    if (!item) return;
    const id = typeof item.id === "string" ? item.id : "";
    const parts = (value: unknown) => (Array.isArray(value) ? value : []);
    if (item.type === "message") {
      parts(item.content).forEach((part, index) => {
        this.#whole(`${id}/c${index}`, partText(asFields(part)), false);
      });
    } else if (item.type === "function_call") {
      this.#whole(`${id}/n`, item.name, false);
      this.#whole(`${id}/a`, item.arguments, false);
    } else if (item.type === "reasoning") {
      parts(item.summary).forEach((part, index) => {
        this.#whole(`${id}/s${index}`, asFields(part)?.text, true);
      });
      parts(item.content).forEach((part, index) => {
        this.#whole(`${id}/r${index}`, asFields(part)?.text, true);
      });
    }
  }

  /** A whole text: counts what its deltas (or an earlier whole) did not carry. */
  #whole(key: string, text: unknown, reasoning: boolean): void {
    if (typeof text !== "string") return;
    const counted = this.#counted.get(key) ?? 0;
    if (text.length <= counted) return;
    this.#counted.set(key, text.length);
    this.#add(text.slice(counted), reasoning);
  }
}
