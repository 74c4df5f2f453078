/**
 * @module sandbox/responses-item-members
 * OpenAI's refusal of unknown members inside a Responses API `input` item (pure): a member the
 * item's type does not document, or one its content parts (message `content`, a
 * `function_call_output`'s `output`, a reasoning item's `summary` and `content`) do not
 * document, is a 400 `unknown_parameter` naming its path (`Unknown parameter:
 * 'input[0].content[1].foo'.`). The member lists are the openai package's input types
 * (EasyInputMessage, ResponseInputItem.Message, ResponseOutputMessage and the other item and part
 * params), so every documented member stays accepted. Items and parts of other types (hosted
 * tools' items, say) are left to the other rules: their members are not checked here.
 */
import { isRecord } from "./chat-request.ts";
import type { FieldProblem } from "./responses-field-rules.ts";

/**
 * Members each input item type documents. A message's are the union over its three shapes; `id`
 * on a user, system or developer message is in none of the package's param types, but
 * `input_items` lists such messages with one and OpenAI takes items back with their `id`, so it
 * stays accepted rather than refuse what the vendor may take.
 */
export const ITEM_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  message: ["type", "role", "content", "id", "status", "phase"],
  function_call: ["type", "call_id", "name", "arguments", "id", "status", "namespace", "caller"],
  function_call_output: ["type", "call_id", "output", "id", "status", "caller"],
  reasoning: ["type", "id", "summary", "content", "encrypted_content", "status"],
  item_reference: ["type", "id"],
  compaction: ["type", "encrypted_content", "id"],
};

/** Members each content part type documents. */
export const PART_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  input_text: ["type", "text", "prompt_cache_breakpoint"],
  input_image: ["type", "image_url", "file_id", "detail", "prompt_cache_breakpoint"],
  input_file: [
    "type",
    "file_id",
    "file_url",
    "file_data",
    "filename",
    "detail",
    "prompt_cache_breakpoint",
  ],
  output_text: ["type", "text", "annotations", "logprobs"],
  refusal: ["type", "refusal"],
  summary_text: ["type", "text"],
  reasoning_text: ["type", "text"],
};

/** The item's members that hold content parts. */
const PART_LISTS: Readonly<Record<string, readonly string[]>> = {
  message: ["content"],
  function_call_output: ["output"],
  reasoning: ["summary", "content"],
};

function unknownMember(param: string): FieldProblem {
  return { message: `Unknown parameter: '${param}'.`, param, code: "unknown_parameter" };
}

/** The item's type as OpenAI reads it: a message may leave `type` out (its `role` tells). */
function itemType(item: Record<string, unknown>): string | undefined {
  if (item.type !== undefined && item.type !== null) return String(item.type);
  if (item.role !== undefined) return "message";
  return "id" in item ? "item_reference" : undefined;
}

/** The first unknown member of the parts in `parts` (when it is a list), by its path. */
function partsProblem(parts: unknown, path: string): FieldProblem | undefined {
  if (!Array.isArray(parts)) return undefined;
  for (const [index, part] of parts.entries()) {
    if (!isRecord(part)) continue;
    const known = PART_MEMBERS[String(part.type)];
    if (known === undefined) continue;
    for (const key of Object.keys(part)) {
      if (!known.includes(key)) return unknownMember(`${path}[${index}].${key}`);
    }
  }
  return undefined;
}

/** The first unknown member of an input item or of its parts, in input order; `undefined` if none. */
export function inputMembersProblem(input: readonly unknown[]): FieldProblem | undefined {
  for (const [index, item] of input.entries()) {
    if (!isRecord(item)) continue;
    const type = itemType(item);
    const known = type === undefined ? undefined : ITEM_MEMBERS[type];
    if (type === undefined || known === undefined) continue; // another rule's business
    for (const key of Object.keys(item)) {
      if (!known.includes(key)) return unknownMember(`input[${index}].${key}`);
    }
    for (const list of PART_LISTS[type] ?? []) {
      const problem = partsProblem(item[list], `input[${index}].${list}`);
      if (problem) return problem;
    }
  }
  return undefined;
}
