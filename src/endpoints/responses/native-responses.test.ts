import { describe, expect, it } from "vitest";
import { clientSnapshot, NativeRelay, nativeResponsesBody } from "./native-responses.ts";

describe("the native route's request", () => {
  it("puts the continued conversation in input, without ids, and never asks the upstream to store", () => {
    const sent = nativeResponsesBody(
      {
        model: "gpt-4o-mini",
        input: "And now?",
        instructions: "Brief.",
        previous_response_id: "resp_1",
        store: true,
        max_output_tokens: 100,
        metadata: { a: "b" },
        frobnicate: 1,
      } as Parameters<typeof nativeResponsesBody>[0],
      [
        { type: "message", role: "user", content: "Hi", id: "msg_1", status: "completed" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hm" }] },
        { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "opaque" },
        { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{}" },
      ],
      "gpt-4o-mini-2024-07-18",
    );
    expect(sent).toEqual({
      model: "gpt-4o-mini-2024-07-18",
      input: [
        { type: "message", role: "user", content: "Hi" },
        { type: "reasoning", summary: [], encrypted_content: "opaque" },
        { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
        { type: "message", role: "user", content: "And now?" },
      ],
      store: false,
      instructions: "Brief.",
      max_output_tokens: 100,
      metadata: { a: "b" },
      include: ["reasoning.encrypted_content"],
    });
  });
});

describe("the native route's answer", () => {
  it("puts the gateway's id and the client's model, store, previous_response_id and metadata back", () => {
    expect(
      clientSnapshot(
        { id: "resp_vendor", model: "gpt-4o-mini-2024-07-18", store: false, output: [] },
        { model: "alias", input: "x", previous_response_id: "resp_0" },
        { id: "resp_x", model: "gpt-4o-mini" },
      ),
    ).toEqual({
      id: "resp_x",
      model: "gpt-4o-mini",
      store: true,
      previous_response_id: "resp_0",
      metadata: {},
      output: [],
    });
  });

  it("ends a broken stream after the last sequence number seen", () => {
    const relay = new NativeRelay({ model: "m", input: "x" }, { id: "resp_x", model: "m" });
    relay.frame("response.created", {
      type: "response.created",
      sequence_number: 0,
      response: { id: "resp_vendor", status: "in_progress" },
    });
    relay.frame("response.output_text.delta", {
      type: "response.output_text.delta",
      sequence_number: 5,
      delta: "a",
    });
    const frames = relay.failed(new Error("reset"));
    expect(frames.map((frame) => frame.event)).toEqual(["error", "response.failed"]);
    expect(
      frames.map((frame) => (frame.data as { sequence_number: number }).sequence_number),
    ).toEqual([6, 7]);
    expect((frames[1]!.data as { response: unknown }).response).toMatchObject({
      id: "resp_x",
      status: "failed",
      error: { code: "server_error", message: "reset" },
    });
  });
});
