/**
 * @module sandbox/gemini-request-config
 * Validates the non-content parts of a Gemini `generateContent` body (pure): `generationConfig`,
 * `tools` with their OpenAPI-subset schemas, and `toolConfig`. Failures carry Google's wording
 * (`Invalid JSON payload received. Unknown name ...`, `Invalid value at ...`, `* Request.field:`).
 * Google's JSON accepts both camelCase and snake_case field names; so does the sandbox.
 * @see https://ai.google.dev/api/generate-content#generationconfig
 * @see https://ai.google.dev/api/caching#Schema
 */
import type { ChatRequest, ChatTool, JsonRecord } from "./chat-request.ts";
import { isRecord } from "./chat-request.ts";

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

export const camel = (key: string): string =>
  key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
export const snake = (key: string): string =>
  key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** A shallow copy with snake_case keys turned camelCase. */
export function camelKeys(record: JsonRecord): JsonRecord {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [camel(key), value]));
}

export function unknownField(name: string, at?: string): string {
  const where = at ? ` at '${at}'` : "";
  return `Invalid JSON payload received. Unknown name "${name}"${where}: Cannot find field.`;
}

export function invalidValue(at: string, type: string, value: unknown): string {
  return `Invalid value at '${at}' (${type}), ${JSON.stringify(value)}`;
}

/** A field violation, worded like Google's `BadRequest` summaries. */
export function violation(path: string, message: string): string {
  return `* GenerateContentRequest.${path}: ${message}\n`;
}

/** The first key of `record` not in `allowed` (after camelCasing), as Google's error. */
export function unknownKey(
  record: JsonRecord,
  allowed: ReadonlySet<string>,
  at?: string,
): string | undefined {
  const key = Object.keys(record).find((name) => !allowed.has(camel(name)));
  return key === undefined ? undefined : unknownField(key, at);
}

const PROTO = "type.googleapis.com/google.ai.generativelanguage.v1beta";
const SCHEMA_KEYS = new Set(
  "type format title description nullable enum maxItems minItems properties required minProperties maxProperties minLength maxLength pattern example anyOf propertyOrdering default items minimum maximum".split(
    " ",
  ),
);
const SCHEMA_TYPES = new Set([
  "TYPE_UNSPECIFIED",
  "STRING",
  "NUMBER",
  "INTEGER",
  "BOOLEAN",
  "ARRAY",
  "OBJECT",
  "NULL",
]);

/**
 * Checks a Gemini `Schema` (an OpenAPI 3.0 subset): JSON-Schema-only keywords such as
 * `additionalProperties` or `$schema` are unknown fields, and `type` must be one name.
 */
export function checkSchema(schema: unknown, at: string): string | undefined {
  if (!isRecord(schema)) return invalidValue(at, `${PROTO}.Schema`, schema);
  const unknown = unknownKey(schema, SCHEMA_KEYS, at);
  if (unknown) return unknown;
  const { type, properties, items, anyOf } = camelKeys(schema);
  if (type !== undefined && (typeof type !== "string" || !SCHEMA_TYPES.has(type.toUpperCase()))) {
    return invalidValue(`${at}.type`, `${PROTO}.Type`, type);
  }
  const nested: Array<[unknown, string]> = [];
  for (const [name, value] of Object.entries(isRecord(properties) ? properties : {}))
    nested.push([value, `${at}.properties[${name}].value`]);
  if (items !== undefined) nested.push([items, `${at}.items`]);
  for (const [i, option] of (Array.isArray(anyOf) ? anyOf : []).entries())
    nested.push([option, `${at}.any_of[${i}]`]);
  for (const [value, path] of nested) {
    const error = checkSchema(value, path);
    if (error) return error;
  }
  return undefined;
}

/** A copy of a schema with every `type` lowercased, the way the reply planner reads types. */
function plannerSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plannerSchema);
  if (!isRecord(schema)) return schema;
  return Object.fromEntries(
    Object.entries(camelKeys(schema)).map(([key, value]) => [
      key,
      key === "type" && typeof value === "string" ? value.toLowerCase() : plannerSchema(value),
    ]),
  );
}

export interface GenerationSettings {
  maxOutputTokens: number | undefined;
  /** A presence or frequency penalty was set. */
  penalties: boolean;
  jsonObject: boolean;
  /** `responseSchema` (or `responseJsonSchema`) with JSON output: the reply is an instance. */
  jsonSchema?: unknown;
  includeThoughts: boolean;
  thinkingBudget: number | undefined;
}

const INT_FIELDS = ["maxOutputTokens", "candidateCount", "topK", "seed"];
const FLOAT_FIELDS = ["temperature", "topP", "presencePenalty", "frequencyPenalty"];
const GENERATION_KEYS = new Set([
  ...INT_FIELDS,
  ...FLOAT_FIELDS,
  ..."stopSequences responseMimeType responseSchema responseJsonSchema responseModalities responseLogprobs logprobs thinkingConfig mediaResolution speechConfig enableEnhancedCivicAnswers".split(
    " ",
  ),
]);
const MIME_TYPES = [
  "text/plain",
  "application/json",
  "application/xml",
  "application/yaml",
  "text/x.enum",
];
const THINKING_KEYS = new Set(["thinkingBudget", "includeThoughts", "thinkingLevel"]);

function checkThinking(raw: unknown, at: string): Checked<Partial<GenerationSettings>> {
  if (raw === undefined) return ok({});
  if (!isRecord(raw)) return fail(invalidValue(at, `${PROTO}.ThinkingConfig`, raw));
  const unknown = unknownKey(raw, THINKING_KEYS, at);
  if (unknown) return fail(unknown);
  const { thinkingBudget, includeThoughts } = camelKeys(raw);
  if (thinkingBudget !== undefined && !Number.isInteger(thinkingBudget)) {
    return fail(invalidValue(`${at}.thinking_budget`, "TYPE_INT32", thinkingBudget));
  }
  if (includeThoughts !== undefined && typeof includeThoughts !== "boolean") {
    return fail(invalidValue(`${at}.include_thoughts`, "TYPE_BOOL", includeThoughts));
  }
  return ok({
    includeThoughts: includeThoughts === true,
    thinkingBudget: typeof thinkingBudget === "number" ? thinkingBudget : undefined,
  });
}

/** Validates `generationConfig` and extracts what the reply planner needs. */
export function readGenerationConfig(raw: unknown): Checked<GenerationSettings> {
  const settings: GenerationSettings = {
    maxOutputTokens: undefined,
    penalties: false,
    jsonObject: false,
    includeThoughts: false,
    thinkingBudget: undefined,
  };
  if (raw === undefined) return ok(settings);
  const at = "generation_config";
  if (!isRecord(raw)) return fail(invalidValue(at, `${PROTO}.GenerationConfig`, raw));
  const unknown = unknownKey(raw, GENERATION_KEYS, at);
  if (unknown) return fail(unknown);
  const config = camelKeys(raw);
  for (const key of INT_FIELDS) {
    const value = config[key];
    if (value !== undefined && !Number.isInteger(value))
      return fail(invalidValue(`${at}.${snake(key)}`, "TYPE_INT32", value));
  }
  for (const key of FLOAT_FIELDS) {
    const value = config[key];
    if (value !== undefined && typeof value !== "number")
      return fail(invalidValue(`${at}.${snake(key)}`, "TYPE_FLOAT", value));
  }
  const { stopSequences, responseMimeType, responseSchema } = config;
  if (
    stopSequences !== undefined &&
    (!Array.isArray(stopSequences) || stopSequences.some((stop) => typeof stop !== "string"))
  ) {
    return fail(invalidValue(`${at}.stop_sequences`, "TYPE_STRING", stopSequences));
  }
  if (responseMimeType !== undefined && !MIME_TYPES.includes(String(responseMimeType))) {
    const allowed = MIME_TYPES.map((type) => `\`${type}\``).join(", ");
    return fail(violation(`${at}.response_mime_type`, `allowed mimetypes are ${allowed}.`));
  }
  if (responseSchema !== undefined) {
    const error = checkSchema(responseSchema, `${at}.response_schema`);
    if (error) return fail(error);
    if (responseMimeType !== "application/json" && responseMimeType !== "text/x.enum") {
      const message = "response_mime_type must be set to `application/json` or `text/x.enum`.";
      return fail(violation(`${at}.response_schema`, message));
    }
  }
  const thinking = checkThinking(config.thinkingConfig, `${at}.thinking_config`);
  if (!thinking.ok) return thinking;
  return ok({
    ...settings,
    ...thinking.value,
    maxOutputTokens:
      typeof config.maxOutputTokens === "number" ? config.maxOutputTokens : undefined,
    penalties: config.presencePenalty !== undefined || config.frequencyPenalty !== undefined,
    jsonObject: responseMimeType === "application/json",
    ...(responseMimeType === "application/json" &&
    (responseSchema !== undefined || config.responseJsonSchema !== undefined)
      ? { jsonSchema: responseSchema ?? config.responseJsonSchema }
      : {}),
  });
}

const TOOL_KEYS = new Set(
  "functionDeclarations googleSearch googleSearchRetrieval codeExecution urlContext retrieval computerUse".split(
    " ",
  ),
);
const DECLARATION_KEYS = new Set(
  "name description parameters parametersJsonSchema response responseJsonSchema behavior".split(
    " ",
  ),
);
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;
const BAD_NAME =
  "Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.";

function readDeclaration(raw: unknown, at: string): Checked<ChatTool> {
  if (!isRecord(raw)) return fail(invalidValue(at, `${PROTO}.FunctionDeclaration`, raw));
  const unknown = unknownKey(raw, DECLARATION_KEYS, at);
  if (unknown) return fail(unknown);
  const { name, parameters, parametersJsonSchema } = camelKeys(raw);
  if (typeof name !== "string" || !FUNCTION_NAME.test(name))
    return fail(violation(`${at}.name`, BAD_NAME));
  if (parameters !== undefined) {
    const error = checkSchema(parameters, `${at}.parameters`);
    if (error) return fail(error);
    const { type, properties } = camelKeys(parameters as JsonRecord);
    const empty = !isRecord(properties) || Object.keys(properties).length === 0;
    if (String(type).toUpperCase() === "OBJECT" && empty)
      return fail(violation(`${at}.parameters.properties`, "should be non-empty for OBJECT type"));
  }
  const schema = parameters ?? parametersJsonSchema;
  const normalized = plannerSchema(schema);
  return ok({ name, parameters: isRecord(normalized) ? normalized : undefined });
}

/** Validates `tools` and returns the declared functions, in order. */
export function readTools(raw: unknown): Checked<ChatTool[]> {
  if (raw === undefined) return ok([]);
  if (!Array.isArray(raw)) return fail(invalidValue("tools", `${PROTO}.Tool`, raw));
  const tools: ChatTool[] = [];
  for (const [t, tool] of raw.entries()) {
    if (!isRecord(tool)) return fail(invalidValue(`tools[${t}]`, `${PROTO}.Tool`, tool));
    const unknown = unknownKey(tool, TOOL_KEYS, `tools[${t}]`);
    if (unknown) return fail(unknown);
    const declarations = camelKeys(tool).functionDeclarations ?? [];
    if (!Array.isArray(declarations)) {
      const at = `tools[${t}].function_declarations`;
      return fail(invalidValue(at, `${PROTO}.FunctionDeclaration`, declarations));
    }
    for (const [f, declaration] of declarations.entries()) {
      const read = readDeclaration(declaration, `tools[${t}].function_declarations[${f}]`);
      if (!read.ok) return read;
      tools.push(read.value);
    }
  }
  return ok(tools);
}

const MODES = ["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"];

/** Validates `toolConfig` into the planner's tool choice (NONE, ANY with a named function). */
export function readToolConfig(raw: unknown): Checked<ChatRequest["toolChoice"]> {
  if (raw === undefined) return ok(undefined);
  const at = "tool_config.function_calling_config";
  if (!isRecord(raw)) return fail(invalidValue("tool_config", `${PROTO}.ToolConfig`, raw));
  const config = camelKeys(raw).functionCallingConfig;
  if (config === undefined) return ok(undefined);
  if (!isRecord(config)) return fail(invalidValue(at, `${PROTO}.FunctionCallingConfig`, config));
  const { mode, allowedFunctionNames } = camelKeys(config);
  if (mode !== undefined && (typeof mode !== "string" || !MODES.includes(mode)))
    return fail(invalidValue(`${at}.mode`, `${PROTO}.FunctionCallingConfig.Mode`, mode));
  if (allowedFunctionNames !== undefined) {
    if (
      !Array.isArray(allowedFunctionNames) ||
      allowedFunctionNames.some((n) => typeof n !== "string")
    )
      return fail(
        invalidValue(`${at}.allowed_function_names`, "TYPE_STRING", allowedFunctionNames),
      );
    if (mode !== "ANY" && mode !== "VALIDATED")
      return fail(violation(`${at}.allowed_function_names`, "only allowed when mode is ANY."));
  }
  if (mode === "NONE") return ok("none");
  const forced = Array.isArray(allowedFunctionNames) ? allowedFunctionNames[0] : undefined;
  return ok(typeof forced === "string" ? { name: forced } : undefined);
}
