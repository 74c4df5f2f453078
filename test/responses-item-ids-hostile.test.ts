/**
 * Input item ids the client gives. `GET /v1/responses/{id}/input_items` pages with `after` (an
 * item id): two stored items sharing an id made the cursor point back at the first one, and a
 * client paging with `after` (the `openai` package's auto-pagination) was served the same page
 * forever with `has_more: true`. Item ids are unique across a conversation now: a repeated one
 * is refused, as OpenAI refuses it.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe("input_items pagination", () => {
  it("refuses two items sharing a client-given id, and pages distinct ones to the end", async () => {
    const user = await createUser(gateway);
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
    const refused = await client.responses
      .create({
        model: "mistral-small-latest",
        max_output_tokens: 16,
        input: [
          { type: "message", role: "user", content: "one", id: "msg_same" },
          { type: "message", role: "user", content: "two", id: "msg_same" },
        ] as unknown as OpenAI.Responses.ResponseInput,
      })
      .then(
        () => undefined,
        (error: { status?: number; param?: string }) => ({
          status: error.status,
          param: error.param,
        }),
      );
    expect(refused).toEqual({ status: 400, param: "input[1].id" });
    const created = await client.responses.create({
      model: "mistral-small-latest",
      max_output_tokens: 16,
      input: [
        { type: "message", role: "user", content: "one", id: "msg_one" },
        { type: "message", role: "user", content: "two", id: "msg_two" },
        { type: "message", role: "user", content: "three" },
      ] as unknown as OpenAI.Responses.ResponseInput,
    });
    const seen: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, {
      limit: 1,
      order: "asc",
    })) {
      const content = (item as { content?: { text?: string }[] }).content?.[0]?.text ?? "?";
      seen.push(content);
      if (seen.length >= 10) break;
    }
    expect(seen).toEqual(["one", "two", "three"]);
    // Re-sending an item of the continued conversation is a duplicate too.
    const again = await client.responses
      .create({
        model: "mistral-small-latest",
        max_output_tokens: 16,
        previous_response_id: created.id,
        input: [
          { type: "message", role: "user", content: "one", id: "msg_one" },
        ] as unknown as OpenAI.Responses.ResponseInput,
      })
      .then(
        () => undefined,
        (error: { status?: number; param?: string }) => ({
          status: error.status,
          param: error.param,
        }),
      );
    expect(again).toEqual({ status: 400, param: "input[0].id" });
  });
});
