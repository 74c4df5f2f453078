/**
 * Hostile bodies at the default body size limit (10 MiB): emails built to make a pattern
 * backtrack, nesting, huge prompts full of sandbox directives, oversized fields on every kind of
 * endpoint. Each is answered with its 4xx in its endpoint's dialect, and `/healthz` keeps
 * answering within a fraction of a second while they are read and refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { slowestHealthz } from "./support/healthz-probe.ts";

const LIMIT = 10 * 1024 * 1024;

/** `text` repeated to fill about `bytes`. */
const fill = (text: string, bytes: number) => text.repeat(Math.floor(bytes / text.length));

/** A JSON body of `prefix`, a string filling the rest of the limit, and `suffix`. */
function nearLimit(prefix: string, unit: string, suffix: string): string {
  const room = LIMIT - prefix.length - suffix.length - 64;
  return prefix + fill(unit, room) + suffix;
}

interface Case {
  name: string;
  path: string;
  caller: "none" | "user" | "admin";
  body: string;
  /** Accepted statuses (all 4xx). */
  status: number[];
  /** The error dialect: the gateway's `{error:{code}}`, Anthropic's `{type:"error"}`, or 402's message-only shape. */
  dialect: "gateway" | "anthropic";
  /** The error code the answer must carry, when only one is right. */
  code?: string;
}

const BACKTRACKING_EMAIL = (open: string, close: string) =>
  nearLimit(`${open}"email":"a@`, "a.", `@","password":"a long password"${close}`);

const CASES: Case[] = [
  {
    name: "register with a backtracking email",
    path: "/v1/account/register",
    caller: "none",
    body: BACKTRACKING_EMAIL("{", "}"),
    status: [400, 429],
    dialect: "gateway",
  },
  {
    name: "login with a backtracking email",
    path: "/v1/account/login",
    caller: "none",
    body: BACKTRACKING_EMAIL("{", "}"),
    status: [400, 429],
    dialect: "gateway",
  },
  {
    name: "admin account creation with a backtracking email",
    path: "/v1/admin/accounts",
    caller: "admin",
    body: BACKTRACKING_EMAIL("{", "}"),
    status: [400],
    dialect: "gateway",
  },
  {
    name: "chat nested as deep as the body allows",
    path: "/v1/chat/completions",
    caller: "user",
    body: nearLimit('{"model":"gpt-4o-mini","messages":', "[", ""),
    status: [400],
    dialect: "gateway",
  },
  {
    name: "messages nested as deep as the body allows",
    path: "/v1/messages",
    caller: "user",
    body: nearLimit('{"model":"claude-sonnet-4-5","max_tokens":16,"messages":', "[{", ""),
    status: [400],
    dialect: "anthropic",
  },
  {
    name: "chat whose prompt is 10 MiB of sandbox directives",
    path: "/v1/chat/completions",
    caller: "user",
    body: nearLimit(
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"',
      "[[sandbox:words=9;",
      '"}]}',
    ),
    status: [400, 402],
    dialect: "gateway",
  },
  {
    name: "messages whose prompt is 10 MiB of sandbox directives",
    path: "/v1/messages",
    caller: "user",
    body: nearLimit(
      '{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"',
      "[[sandbox:",
      '"}]}',
    ),
    status: [400, 402],
    dialect: "anthropic",
  },
  {
    name: "a model name of 10 MiB",
    path: "/v1/chat/completions",
    caller: "user",
    body: nearLimit('{"model":"', "gpt-4o-", '","messages":[{"role":"user","content":"hi"}]}'),
    status: [400, 404],
    dialect: "gateway",
  },
  {
    name: "embeddings of one 10 MiB input",
    path: "/v1/embeddings",
    caller: "user",
    body: nearLimit('{"model":"text-embedding-v4","input":"', "word ", '"}'),
    status: [400, 402],
    dialect: "gateway",
  },
  {
    name: "embeddings of a million tiny inputs",
    path: "/v1/embeddings",
    caller: "user",
    body: nearLimit('{"model":"text-embedding-v4","input":["a"', ',"a"', "]}"),
    status: [400],
    dialect: "gateway",
    code: "json_too_many_values",
  },
  {
    name: "an image prompt of 10 MiB",
    path: "/v1/images/generations",
    caller: "user",
    body: nearLimit('{"model":"imgmodel-1","prompt":"', "a cat ", '"}'),
    status: [400],
    dialect: "gateway",
  },
  {
    name: "speech of 10 MiB of text",
    path: "/v1/audio/speech",
    caller: "user",
    body: nearLimit('{"model":"tts3-flash","voice":"Cherry","input":"', "say ", '"}'),
    status: [400, 402],
    dialect: "gateway",
  },
  {
    name: "a body one byte over the limit",
    path: "/v1/chat/completions",
    caller: "user",
    body: `{"model":"gpt-4o-mini","messages":[],"pad":"${"x".repeat(LIMIT)}"}`,
    status: [413],
    dialect: "gateway",
  },
];

describe("hostile bodies at the body size limit", () => {
  let gateway: TestGateway;
  let userKey: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { auth: { login_attempts_per_minute: 1000, register_attempts_per_hour: 1000 } },
    });
    userKey = (await createUser(gateway, { balanceMicros: 5_000_000 })).key;
  });
  afterAll(() => gateway?.close());

  for (const hostile of CASES) {
    it(`${hostile.name}: ${hostile.status.join(" or ")}, /healthz answering throughout`, async () => {
      const key =
        hostile.caller === "user"
          ? userKey
          : hostile.caller === "admin"
            ? gateway.adminKey
            : undefined;
      const { slowestMs, result } = await slowestHealthz(gateway, async () => {
        const response = await gateway.request(hostile.path, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: hostile.body,
          ...(key ? { key } : {}),
        });
        return { status: response.status, text: await response.text() };
      });
      expect(hostile.status, result.text.slice(0, 300)).toContain(result.status);
      const body = JSON.parse(result.text) as {
        type?: string;
        error?: { type?: string; code?: string; message?: string };
      };
      if (hostile.dialect === "anthropic") {
        expect(body.type).toBe("error");
        expect(typeof body.error?.type).toBe("string");
      } else {
        expect(typeof body.error?.message).toBe("string");
      }
      if (hostile.code) expect(body.error?.code).toBe(hostile.code);
      expect(result.text.length).toBeLessThan(4096);
      // Reading a 10 MB body holds the loop a few hundred ms on a busy 2-core machine; a
      // backtracking check on it would hold it for seconds.
      expect(slowestMs).toBeLessThan(1_000);
    });
  }
});
