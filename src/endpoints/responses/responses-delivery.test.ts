/**
 * The delivered count of a native Responses stream: each text counted once, however the vendor
 * sent it (deltas, then the same text whole in `.done` events and the item; or whole only).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ResponsesDelivery } from "./responses-delivery.ts";

function counter() {
  const got = { text: "", reasoning: "" };
  const delivery = new ResponsesDelivery((text, reasoning) => {
    if (reasoning) got.reasoning += text;
    else got.text += text;
  });
  return { got, delivery };
}

/** `text` cut into pieces at the given points. */
const cut = (text: string, points: number[]) => {
  const at = [...new Set(points.map((point) => point % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of [...at, text.length]) {
    pieces.push(text.slice(from, point));
    from = point;
  }
  return pieces.filter((piece) => piece.length > 0);
};

describe("ResponsesDelivery", () => {
  it("counts a message's text once: deltas, then its .done, part and item repeating it", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.array(fc.nat()),
        fc.integer({ min: 0, max: 1 }),
        (text, points, sendWholeFirst) => {
          const { got, delivery } = counter();
          const part = { type: "output_text", text, annotations: [] };
          const item = { id: "msg_1", type: "message", role: "assistant", content: [part] };
          if (sendWholeFirst) delivery.note("response.output_item.added", { item });
          for (const delta of cut(text, points))
            delivery.note("response.output_text.delta", {
              item_id: "msg_1",
              content_index: 0,
              delta,
            });
          delivery.note("response.output_text.done", { item_id: "msg_1", content_index: 0, text });
          delivery.note("response.content_part.done", { item_id: "msg_1", content_index: 0, part });
          delivery.note("response.output_item.done", { item });
          expect(got).toEqual({ text, reasoning: "" });
        },
      ),
    );
  });

  it("counts what only came whole: an item's text, a call's name and arguments, reasoning", () => {
    const { got, delivery } = counter();
    delivery.note("response.output_item.added", {
      item: { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "think" }] },
    });
    delivery.note("response.output_item.done", {
      item: { id: "fc_1", type: "function_call", name: "lookup", arguments: '{"q":1}' },
    });
    delivery.note("response.output_item.done", {
      item: { id: "msg_1", type: "message", content: [{ type: "refusal", refusal: "no" }] },
    });
    expect(got).toEqual({ text: 'lookup{"q":1}no', reasoning: "think" });
  });

  it("counts arguments and reasoning deltas once against their .done events", () => {
    const { got, delivery } = counter();
    for (const delta of ['{"a"', ":1}"])
      delivery.note("response.function_call_arguments.delta", { item_id: "fc_1", delta });
    delivery.note("response.function_call_arguments.done", {
      item_id: "fc_1",
      arguments: '{"a":1}',
    });
    delivery.note("response.reasoning_summary_text.delta", {
      item_id: "rs_1",
      summary_index: 0,
      delta: "hm",
    });
    delivery.note("response.reasoning_summary_text.done", {
      item_id: "rs_1",
      summary_index: 0,
      text: "hmm",
    });
    expect(got).toEqual({ text: '{"a":1}', reasoning: "hmm" });
  });

  it("ignores events of any other shape without throwing", () => {
    fc.assert(
      fc.property(fc.string(), fc.jsonValue(), (event, data) => {
        const { delivery } = counter();
        const fields =
          typeof data === "object" && data !== null && !Array.isArray(data) ? data : { data };
        delivery.note(event, fields as Record<string, unknown>);
        delivery.note("response.output_item.done", { item: data });
        delivery.note("response.content_part.done", { part: data, item_id: data });
      }),
    );
  });
});
