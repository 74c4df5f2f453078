/**
 * The sandbox's OpenAI Responses emulation refuses an unknown member inside an `input` item or
 * one of its content parts, as OpenAI does (OR §1.1: "Unknown members inside an item → 400
 * `unknown_parameter` with a path param such as `input[0].bogus`"), in the words of its
 * top-level refusal (`Unknown parameter: '<path>'.`), and keeps taking every member the openai
 * package's input types document. Requests go straight to a sandbox started alone.
 * OR = /work/shared/reference/openai-responses.md; member lists from openai 6.49.0's
 * `resources/responses/responses.d.ts`.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTENT_PART_FIELDS, ITEM_FIELDS } from "../src/endpoints/responses/schema.ts";
import { ITEM_MEMBERS, PART_MEMBERS } from "../src/sandbox/responses-item-members.ts";
import { type RunningSandbox, startSandbox } from "../src/sandbox/server.ts";

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({});
});
afterAll(() => sandbox.close());

type Obj = Record<string, unknown>;

async function send(input: unknown[]): Promise<{ status: number; body: Obj }> {
  const response = await fetch(`${sandbox.url}/openai/v1/responses`, {
    method: "POST",
    headers: { authorization: "Bearer sk-test", "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", input, store: false }),
  });
  return { status: response.status, body: (await response.json()) as Obj };
}

async function expectAccepted(input: unknown[]) {
  const { status, body } = await send(input);
  expect(status, JSON.stringify(body).slice(0, 400)).toBe(200);
}

async function expectUnknown(input: unknown[], param: string) {
  const { status, body } = await send(input);
  expect(status, JSON.stringify(body).slice(0, 400)).toBe(400);
  expect(body).toEqual({
    error: {
      message: `Unknown parameter: '${param}'.`,
      type: "invalid_request_error",
      param,
      code: "unknown_parameter",
    },
  });
}

const PNG = "data:image/png;base64,iVBORw0KGgo=";
const PDF = "data:application/pdf;base64,JVBERi0xLjQK";
const BREAKPOINT = { mode: "explicit" };

/** Every documented member of each part, filled. */
const PARTS = {
  input_text: { type: "input_text", text: "hello", prompt_cache_breakpoint: BREAKPOINT },
  input_image: {
    type: "input_image",
    image_url: PNG,
    file_id: null,
    detail: "high",
    prompt_cache_breakpoint: BREAKPOINT,
  },
  input_file: {
    type: "input_file",
    file_data: PDF,
    filename: "a.pdf",
    file_id: null,
    file_url: "https://example.com/a.pdf",
    detail: "auto",
    prompt_cache_breakpoint: BREAKPOINT,
  },
  output_text: {
    type: "output_text",
    text: "earlier answer",
    annotations: [
      { type: "url_citation", start_index: 0, end_index: 3, url: "https://e.x", title: "t" },
    ],
    logprobs: [],
  },
  refusal: { type: "refusal", refusal: "no" },
  summary_text: { type: "summary_text", text: "thought" },
  reasoning_text: { type: "reasoning_text", text: "raw thought" },
} satisfies Record<string, Obj>;

/** Every documented member of each item, filled; one conversation the sandbox answers. */
function fullConversation(): Obj[] {
  return [
    { type: "message", role: "system", content: "Be brief.", status: "completed", id: "msg_s" },
    { type: "message", role: "developer", content: [PARTS.input_text], phase: "commentary" },
    {
      type: "message",
      role: "user",
      id: "msg_u",
      status: "completed",
      content: [PARTS.input_text, PARTS.input_image, PARTS.input_file],
    },
    {
      type: "message",
      role: "assistant",
      id: "msg_a",
      status: "completed",
      phase: "final_answer",
      content: [PARTS.output_text, PARTS.refusal],
    },
    {
      type: "reasoning",
      id: "rs_1",
      summary: [PARTS.summary_text],
      content: [PARTS.reasoning_text],
      encrypted_content: "gAAAA",
      status: "completed",
    },
    {
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "lookup",
      arguments: '{"q":"x"}',
      status: "completed",
      namespace: "tools",
      caller: { type: "direct" },
    },
    {
      type: "function_call_output",
      id: "fco_1",
      call_id: "call_1",
      status: "completed",
      caller: { type: "direct" },
      output: [PARTS.input_text, PARTS.input_image, PARTS.input_file],
    },
    { type: "compaction", id: "cmp_1", encrypted_content: "gAAAA" },
    { role: "user", content: "And now?" },
  ];
}

describe("documented members stay accepted", () => {
  it("every documented member of every item and part, in one conversation", async () => {
    await expectAccepted(fullConversation());
  });

  it("easy messages without type, with string content, for every role", async () => {
    for (const role of ["user", "system", "developer", "assistant"])
      await expectAccepted([{ role, content: "hi" }]);
  });

  it("the Response's own output items replayed as they came", async () => {
    const first = await send([{ role: "user", content: "Hello" }]);
    const output = first.body.output as Obj[];
    await expectAccepted([{ role: "user", content: "Hello" }, ...output]);
  });
});

describe("the gateway never sends a member the sandbox refuses", () => {
  // A native route sends an item's known fields only (`known-fields.ts`): each must be one the
  // sandbox takes, or every gateway test over the sandbox's OpenAI route could meet a 400.
  it("every item field and part field of the gateway's schema is a sandbox member", () => {
    for (const [type, fields] of Object.entries(ITEM_FIELDS))
      expect(ITEM_MEMBERS[type], type).toEqual(expect.arrayContaining([...fields]));
    for (const [type, fields] of Object.entries(CONTENT_PART_FIELDS))
      expect(PART_MEMBERS[type], type).toEqual(expect.arrayContaining([...fields]));
  });
});

describe("unknown members are refused with their path (OR §1.1)", () => {
  const cases: [string, (input: Obj[]) => void, string][] = [
    ["a system message", (input) => Object.assign(input[0]!, { foo: 1 }), "input[0].foo"],
    ["a developer message", (input) => Object.assign(input[1]!, { name: "x" }), "input[1].name"],
    ["a user message", (input) => Object.assign(input[2]!, { text: "x" }), "input[2].text"],
    [
      "an assistant message",
      (input) => Object.assign(input[3]!, { refusal: "x" }),
      "input[3].refusal",
    ],
    ["a reasoning item", (input) => Object.assign(input[4]!, { text: "x" }), "input[4].text"],
    ["a function_call", (input) => Object.assign(input[5]!, { output: "x" }), "input[5].output"],
    ["a function_call_output", (input) => Object.assign(input[6]!, { name: "x" }), "input[6].name"],
    ["a compaction item", (input) => Object.assign(input[7]!, { summary: [] }), "input[7].summary"],
    ["an easy message", (input) => Object.assign(input[8]!, { bogus: null }), "input[8].bogus"],
  ];
  for (const [what, mutate, param] of cases) {
    it(`on ${what}: ${param}`, async () => {
      const input = structuredClone(fullConversation());
      mutate(input);
      await expectUnknown(input, param);
    });
  }

  const partCases: [string, number, string, number, string][] = [
    ["input_text", 2, "content", 0, "detail"],
    ["input_image", 2, "content", 1, "text"],
    ["input_file", 2, "content", 2, "image_url"],
    ["output_text", 3, "content", 0, "refusal"],
    ["refusal", 3, "content", 1, "text"],
    ["summary_text", 4, "summary", 0, "annotations"],
    ["reasoning_text", 4, "content", 0, "foo"],
    ["a tool output's input_text", 6, "output", 0, "logprobs"],
    ["a tool output's input_file", 6, "output", 2, "bogus"],
  ];
  for (const [what, item, list, index, key] of partCases) {
    const param = `input[${item}].${list}[${index}].${key}`;
    it(`on ${what}: ${param}`, async () => {
      const input = structuredClone(fullConversation());
      const parts = input[item]![list] as Obj[];
      parts[index] = { ...parts[index], [key]: "x" };
      await expectUnknown(input, param);
    });
  }

  it("on an item reference, before it is looked up (404)", async () => {
    await expectUnknown([{ type: "item_reference", id: "msg_x", role: "user" }], "input[0].role");
  });

  it("before the conversation's rules: an unanswered tool output earlier in the input", async () => {
    await expectUnknown(
      [
        { type: "function_call_output", call_id: "call_none", output: "x" },
        { role: "user", content: "hi", foo: 1 },
      ],
      "input[1].foo",
    );
  });
});

/** A site of a conversation where a member can be added: the object, its path, its members. */
interface Site {
  at: (input: Obj[]) => Obj;
  path: string;
  known: readonly string[];
}

const ITEM_KNOWN: Record<string, readonly string[]> = {
  message: ["type", "role", "content", "id", "status", "phase"],
  function_call: ["type", "call_id", "name", "arguments", "id", "status", "namespace", "caller"],
  function_call_output: ["type", "call_id", "output", "id", "status", "caller"],
  reasoning: ["type", "id", "summary", "content", "encrypted_content", "status"],
  compaction: ["type", "encrypted_content", "id"],
};
/** Members a random subset may leave out (the rest are required or make the item what it is). */
const REQUIRED = new Set(["role", "content", "call_id", "name", "arguments", "output", "summary"]);
const REQUIRED_PART = new Set(["type", "text", "refusal"]);
const ALL_NAMES = [
  ...new Set([...Object.values(ITEM_KNOWN).flat(), ...Object.values(PARTS).flatMap(Object.keys)]),
];

/** The conversation with each item and part cut to a random subset of its optional members. */
const Conversation = fc.array(fc.boolean(), { minLength: 128, maxLength: 128 }).map((keep) => {
  let bit = 0;
  const sites: Site[] = [];
  const cut = (value: Obj, required: Set<string>) =>
    Object.fromEntries(
      Object.entries(value).filter(([key]) => required.has(key) || keep[bit++ % 128]),
    );
  const input = fullConversation().map((full, i) => {
    const item = cut(full, new Set([...REQUIRED, ...(full.type === "message" ? [] : ["type"])]));
    const type = String(full.type ?? "message");
    sites.push({ at: (all) => all[i]!, path: `input[${i}]`, known: ITEM_KNOWN[type]! });
    for (const list of ["content", "summary", "output"]) {
      const parts = item[list];
      if (!Array.isArray(parts)) continue;
      item[list] = parts.map((part: Obj, p) => {
        sites.push({
          at: (all) => (all[i]![list] as Obj[])[p]!,
          path: `input[${i}].${list}[${p}]`,
          known: Object.keys(PARTS[part.type as keyof typeof PARTS]),
        });
        return cut(part, REQUIRED_PART);
      });
    }
    return item;
  });
  return { input, sites };
});

describe("property: documented member sets pass, any other key name is refused", () => {
  it("any subset of the documented optional members is accepted", async () => {
    await fc.assert(
      fc.asyncProperty(Conversation, async ({ input }) => {
        await expectAccepted(input);
      }),
      { numRuns: 60 },
    );
  });

  it("one extra key, anywhere, is refused with its path", async () => {
    const Name = fc.oneof(
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.constantFrom(...ALL_NAMES),
    );
    const Value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant({}),
    );
    await fc.assert(
      fc.asyncProperty(Conversation, fc.nat(), Name, Value, async (conv, pick, name, value) => {
        const site = conv.sites[pick % conv.sites.length]!;
        fc.pre(!site.known.includes(name) && name !== "__proto__");
        const input = structuredClone(conv.input);
        site.at(input)[name] = value;
        await expectUnknown(input, `${site.path}.${name}`);
      }),
      { numRuns: 150 },
    );
  });
});
