/**
 * The sandbox is as strict as the vendors it emulates, and no stricter.
 *
 * Every request goes straight to a sandbox started alone (`startSandbox`), no gateway.
 * Rules come from /work/shared/reference/provider-protocols.md (PP) and
 * /work/shared/reference/openai-responses.md (OR); each `it` names its section and line.
 * The "baseline" tests show the requests are otherwise well formed, so each refusal
 * comes from the one rule it names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSandbox, startSandbox } from "../src/sandbox/server.ts";
import { pngBytes } from "./support/image-fixtures.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

const BEARER = { authorization: "Bearer sk-test", "content-type": "application/json" };

function postJson(path: string, body: unknown, headers: Record<string, string> = BEARER) {
  return fetch(`${sandbox.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
}

/** `POST /openai/v1/images/edits` with one 64×64 PNG and the given form fields. */
function postEdit(fields: Record<string, string>) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append(
    "image",
    new Blob([new Uint8Array(pngBytes(64, 64, { alpha: true }))], { type: "image/png" }),
    "a.png",
  );
  return fetch(`${sandbox.url}/openai/v1/images/edits`, {
    method: "POST",
    headers: { authorization: "Bearer sk-test" },
    body: form,
  });
}

async function expectOpenAI400(response: Response, error: Record<string, unknown> = {}) {
  const text = await response.text();
  expect(response.status, text.slice(0, 300)).toBe(400);
  expect(JSON.parse(text).error).toMatchObject({ type: "invalid_request_error", ...error });
}

const responses = (body: unknown) => postJson("/openai/v1/responses", body);

describe("baseline: the requests below are otherwise accepted", () => {
  it("gpt-image-1 edit at 1024x1024, gpt-image-2 edit at 1536x864, opaque background", async () => {
    const one = await postEdit({ model: "gpt-image-1", prompt: "p", size: "1024x1024" });
    expect(one.status, (await one.text()).slice(0, 300)).toBe(200);
    const two = await postEdit({ model: "gpt-image-2", prompt: "p", size: "1536x864" });
    expect(two.status, (await two.text()).slice(0, 300)).toBe(200);
  });

  it("a Responses request with metadata, include, tool_choice and a json mention", async () => {
    const ok = await responses({
      model: "gpt-4o-mini",
      input: "answer in json",
      metadata: { a: "1" },
      include: ["reasoning.encrypted_content"],
      tool_choice: "auto",
      text: { format: { type: "json_object" } },
      stream: false,
    });
    expect(ok.status, await ok.text()).toBe(200);
  });

  it("Voyage float embeddings", async () => {
    const ok = await postJson("/voyage/v1/embeddings", { model: "voyage-4", input: ["a"] });
    expect(ok.status, await ok.text()).toBe(200);
  });
});

describe("OpenAI image edits (PP §8, lines 329-365)", () => {
  it("refuses a free-form size on gpt-image-1 (PP:339 — 1.x takes only 1024x1024, 1536x1024, 1024x1536, auto; other WxH is gpt-image-2 only)", async () => {
    await expectOpenAI400(await postEdit({ model: "gpt-image-1", prompt: "p", size: "1536x864" }), {
      param: "size",
    });
  });

  it("refuses background=transparent on gpt-image-2 (PP:342 — 'not supported by gpt-image-2')", async () => {
    await expectOpenAI400(
      await postEdit({ model: "gpt-image-2", prompt: "p", background: "transparent" }),
      { param: "background" },
    );
  });

  it("refuses input_fidelity=high on gpt-image-1-mini, and a value outside high|low (PP:342 — `input_fidelity` (high|low; mini only low))", async () => {
    await expectOpenAI400(
      await postEdit({ model: "gpt-image-1-mini", prompt: "p", input_fidelity: "high" }),
      { param: "input_fidelity" },
    );
    await expectOpenAI400(
      await postEdit({ model: "gpt-image-1", prompt: "p", input_fidelity: "medium" }),
      { param: "input_fidelity" },
    );
  });

  it("refuses output_compression outside 0-100 (PP:342 — `output_compression` (0–100, jpeg/webp))", async () => {
    await expectOpenAI400(
      await postEdit({
        model: "gpt-image-1",
        prompt: "p",
        output_format: "jpeg",
        output_compression: "150",
      }),
      { param: "output_compression" },
    );
  });

  it("refuses partial_images outside 0-3 (PP:342 — `stream` + `partial_images` (0–3))", async () => {
    await expectOpenAI400(
      await postEdit({ model: "gpt-image-1", prompt: "p", stream: "true", partial_images: "5" }),
      { param: "partial_images" },
    );
  });

  it("refuses `moderation` on an edit (PP:342 — 'moderation is a generations-only parameter')", async () => {
    await expectOpenAI400(
      await postEdit({ model: "gpt-image-1", prompt: "p", moderation: "low" }),
      {
        param: "moderation",
      },
    );
  });
});

describe("OpenAI Responses request rules (OR §1, §5, 'What an emulator must reproduce')", () => {
  it("refuses Chat's stream_options.include_usage (OR:57 and OR:79 — 400 unknown_parameter `stream_options.include_usage`)", async () => {
    await expectOpenAI400(
      await responses({
        model: "gpt-4o-mini",
        input: "x",
        stream: true,
        stream_options: { include_usage: true },
      }),
      { code: "unknown_parameter", param: "stream_options.include_usage" },
    );
  });

  it("refuses 17 metadata keys (OR:60 — 400 object_above_max_properties)", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    await expectOpenAI400(await responses({ model: "gpt-4o-mini", input: "x", metadata }), {
      code: "object_above_max_properties",
    });
  });

  it("refuses an unknown `include` member (OR:61 — 400 invalid_value, param include[0])", async () => {
    await expectOpenAI400(
      await responses({ model: "gpt-4o-mini", input: "x", include: ["bogus.field"] }),
      { code: "invalid_value", param: "include[0]" },
    );
  });

  it('refuses an empty model name (OR:45 and OR:351 — `""` → 400 model_not_found)', async () => {
    await expectOpenAI400(await responses({ model: "", input: "x" }), {
      code: "model_not_found",
      param: "model",
    });
  });

  it("refuses a non-default temperature on a reasoning model (OR:52 and OR:349 — 'Unsupported parameter: 'temperature' is not supported with this model.', code null)", async () => {
    await expectOpenAI400(await responses({ model: "o3-mini", input: "x", temperature: 0.5 }), {
      message: "Unsupported parameter: 'temperature' is not supported with this model.",
      param: "temperature",
      code: null,
    });
  });

  it("refuses Chat's tool_choice shape (OR:139-140 — `{type:function, function:{name}}` → 400 missing_required_parameter tool_choice.name)", async () => {
    await expectOpenAI400(
      await responses({
        model: "gpt-4o-mini",
        input: "x",
        tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }],
        tool_choice: { type: "function", function: { name: "f" } },
      }),
      { code: "missing_required_parameter", param: "tool_choice.name" },
    );
  });

  it("refuses an unknown tool_choice string (OR:140 — 400 invalid_value)", async () => {
    await expectOpenAI400(
      await responses({ model: "gpt-4o-mini", input: "x", tool_choice: "bogus" }),
      {
        code: "invalid_value",
      },
    );
  });

  it("refuses a function_call replayed without its output (OR:356 — 400 'No tool output found for function call call_….', param input)", async () => {
    await expectOpenAI400(
      await responses({
        model: "gpt-4o-mini",
        input: [
          { role: "user", content: "Find" },
          { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
          { role: "user", content: "and?" },
        ],
        tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }],
      }),
      { message: "No tool output found for function call call_1.", param: "input" },
    );
  });

  it("refuses a replayed assistant message whose id does not begin with msg (OR:93 — 400 invalid_id_prefix)", async () => {
    await expectOpenAI400(
      await responses({
        model: "gpt-4o-mini",
        input: [
          { role: "user", content: "x" },
          {
            type: "message",
            id: "abc_1",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "hi", annotations: [] }],
          },
          { role: "user", content: "y" },
        ],
      }),
      { code: "invalid_id_prefix", param: "input[1].id" },
    );
  });

  it("refuses a bad `truncation` value (OR:67 and OR:347 — 400 invalid_value 'Supported values are: 'auto' and 'disabled'.')", async () => {
    await expectOpenAI400(
      await responses({ model: "gpt-4o-mini", input: "x", truncation: "bogus" }),
      { code: "invalid_value", param: "truncation" },
    );
  });

  it("refuses text.format json_object when no input message mentions json (OR:532 and OR:650-651)", async () => {
    await expectOpenAI400(
      await responses({
        model: "gpt-4o-mini",
        input: "give me an object",
        text: { format: { type: "json_object" } },
      }),
    );
  });
});

describe("Voyage (PP §6, lines 280-296) — too strict", () => {
  it("accepts output_dtype int8 and answers integer vectors (PP:283 — `output_dtype` float, int8, uint8, binary, ubinary; PP:285 — integer dtypes return integer arrays)", async () => {
    const response = await postJson("/voyage/v1/embeddings", {
      model: "voyage-4",
      input: ["hello"],
      output_dtype: "int8",
    });
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(200);
    const vector = JSON.parse(text).data[0].embedding as number[];
    expect(vector).toHaveLength(1024);
    expect(vector.every((value) => Number.isInteger(value) && value >= -128 && value <= 127)).toBe(
      true,
    );
  });

  it("accepts output_dtype ubinary, bit-packed to dim/8 values (PP:285)", async () => {
    const response = await postJson("/voyage/v1/embeddings", {
      model: "voyage-4",
      input: ["hello"],
      output_dtype: "ubinary",
    });
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(200);
    expect(JSON.parse(text).data[0].embedding).toHaveLength(128);
  });
});

describe("Qwen-Image (PP §2) and DashScope common (PP §1)", () => {
  it("refuses an unknown qwen-image model instead of treating it as qwen-image (PP:75 — unknown model → 404 ModelNotFound or 400 InvalidParameter 'Model not exist'; PP:21 and §2 list the family)", async () => {
    const response = await postJson(
      "/dashscope/api/v1/services/aigc/multimodal-generation/generation",
      {
        model: "qwen-image-ultra",
        input: { messages: [{ role: "user", content: [{ text: "a cat" }] }] },
      },
    );
    const text = await response.text();
    expect([400, 404], text).toContain(response.status);
    expect(JSON.parse(text)).toMatchObject({
      code: expect.stringMatching(/ModelNotFound|InvalidParameter/),
    });
  });
});
