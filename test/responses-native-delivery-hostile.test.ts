/**
 * A native Responses stream (OpenAI's Responses API relayed as it came) from a vendor that sends
 * its answer whole instead of as deltas — the message in `response.output_item.added`, a call's
 * arguments in `output_item.done` — and then breaks. The delivered count read deltas only, so
 * such an answer reached the client and was recorded `failed`, charged nothing. Now each text is
 * counted once however it came (src/endpoints/responses/responses-delivery.ts).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "../src/billing/index.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { usageRowOf } from "./support/usage-rows.ts";
import { fakeOpenAIChatModel } from "./support/vendor-models.ts";

const TEXT = Array.from({ length: 300 }, (_, i) => `word${i} `).join("");

function event(response: ServerResponse, sequence: number, type: string, data: object) {
  response.write(
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...data })}\n\n`,
  );
}

const created = {
  response: {
    id: "resp_vendor",
    object: "response",
    status: "in_progress",
    model: "gpt-4o",
    output: [],
  },
};

/** The answer whole in the items, no deltas, then the connection cut. */
const MODES: Record<string, (response: ServerResponse) => void> = {
  "whole-message": (response) => {
    event(response, 0, "response.created", created);
    event(response, 1, "response.output_item.added", {
      output_index: 0,
      item: {
        id: "msg_1",
        type: "message",
        status: "in_progress",
        role: "assistant",
        content: [{ type: "output_text", text: TEXT, annotations: [] }],
      },
    });
  },
  "whole-call": (response) => {
    event(response, 0, "response.created", created);
    event(response, 1, "response.output_item.done", {
      output_index: 0,
      item: {
        id: "fc_1",
        type: "function_call",
        status: "completed",
        call_id: "call_1",
        name: "store",
        arguments: JSON.stringify({ text: TEXT }),
      },
    });
  },
};

describe("a native Responses stream whose vendor sends its answer whole, then breaks", () => {
  let vendor: Server;
  let gateway: TestGateway;
  beforeAll(async () => {
    vendor = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        const mode = /mode:([a-z-]+)/.exec(body)?.[1] ?? "";
        response.writeHead(200, { "content-type": "text/event-stream" });
        MODES[mode]?.(response);
        setTimeout(() => response.socket?.destroy(), 50);
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}/v1`;
    gateway = await startTestGateway({
      env: { ROGUE_OPENAI_KEY: "sk-rogue" },
      config: { catalog: { models: [fakeOpenAIChatModel(url)] } },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => vendor.close(resolve));
  });

  it.each(["whole-message", "whole-call"])("bills what a %s delivered", async (mode) => {
    const user = await createUser(gateway, { balanceMicros: 50_000_000 });
    const response = await gateway.request("/v1/responses", {
      key: user.key,
      json: { model: "rogue-gpt", stream: true, input: `mode:${mode}` },
    });
    const text = await response.text();
    expect(text).toContain("word299");
    expect(text).toContain("event: response.failed");
    const record = await usageRowOf(gateway, user.key, response.headers.get("x-request-id") ?? "");
    expect(record?.status).toBe("interrupted");
    expect(record?.output_tokens).toBeGreaterThanOrEqual(await countTokens(TEXT, { exact: true }));
    expect(record?.cost_micros).toBeGreaterThan(0);
  });
});
