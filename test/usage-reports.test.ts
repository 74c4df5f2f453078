/**
 * Usage reports (docs/reports.md): `GET /v1/admin/usage` across accounts and the account's own
 * `GET /v1/account/usage` — filters, grouping, cursor pages that return every record exactly
 * once over 5,000 records, CSV that matches the JSON row for row — the attribution a real
 * request names (`user`, `metadata`) on its record, and cursor pages on the other lists.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageRecord } from "../src/store/index.ts";
import { expectGatewayError } from "./support/expect-error.ts";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

type Row = Record<string, unknown>;
interface ListBody {
  object: string;
  data: Row[];
  has_more: boolean;
  next_cursor: string | null;
  group_by?: string;
}

const SEEDED = 5_000;
/** The seeded records lie in January 2025; the real requests of the test are made now. */
const START = Date.UTC(2025, 0, 1);
const RANGE = `from=${START / 1000}&to=${Date.UTC(2025, 1, 1) / 1000}`;
const MODELS = ["gpt-4o-mini", "gpt-4o", "claude-sonnet-4-0"];

/** Reads every page of a list, following `next_cursor`. */
async function allPages(gateway: TestGateway, key: string, path: string): Promise<ListBody[]> {
  const pages: ListBody[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const url: string = cursor ? `${path}${separator}cursor=${cursor}` : path;
    const response = await gateway.request(url, { key });
    expect(response.status, await response.clone().text()).toBe(200);
    const page = (await response.json()) as ListBody;
    expect(page.object).toBe("list");
    pages.push(page);
    expect(page.has_more).toBe(page.next_cursor !== null);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return pages;
}

/** Parses RFC 4180 CSV (quoted cells with doubled quotes, CRLF line ends). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        cell += '"';
        index++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      row.push(cell);
      cell = "";
    } else if (char === "\r" && text[index + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      index++;
    } else cell += char;
  }
  return rows;
}

/** A JSON value as the CSV shows it. */
const asCell = (value: unknown) =>
  value === null || value === undefined
    ? ""
    : typeof value === "object"
      ? JSON.stringify(value)
      : String(value);

describe("usage reports", () => {
  let gateway: TestGateway;
  let alice: { accountId: string; key: string; keyId: string };
  let bob: { accountId: string; key: string; keyId: string };
  const seeded: UsageRecord[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway();
    alice = await createUser(gateway, { balanceMicros: 100_000_000 });
    bob = await createUser(gateway, { balanceMicros: 100_000_000 });
    for (let index = 0; index < SEEDED; index++) {
      const owner = index % 3 === 0 ? bob : alice;
      seeded.push({
        requestId: `req_seed${String(index).padStart(6, "0")}`,
        accountId: owner.accountId,
        keyId: index % 5 === 0 ? null : owner.keyId,
        model: MODELS[index % MODELS.length] ?? "gpt-4o-mini",
        endpoint: "/v1/chat/completions",
        status: "succeeded",
        inputTokens: 10 + (index % 7),
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 20 + (index % 11),
        reasoningTokens: 0,
        images: index % 13 === 0 ? 1 : 0,
        videoSeconds: 0,
        characters: index % 17 === 0 ? 40 : 0,
        costMicros: 100 + (index % 23),
        heldMicros: 0,
        usageSource: "upstream",
        upstreamRequestId: null,
        latencyMs: 5,
        ttfbMs: 2,
        breakdown: { input: 1, 'output, "quoted"': 2 },
        // Every four records share a millisecond: the request id breaks the tie.
        createdAt: START + Math.floor(index / 4) * 2_000_000,
        endUser: index % 10 === 0 ? "end-user-7" : null,
        metadata:
          index % 50 === 0 ? { project: "alpha,beta", note: 'a "quote"\nand a line' } : null,
      });
    }
    // Straight through the store, a few hundred at a time: no HTTP request per record.
    for (let index = 0; index < seeded.length; index += 250) {
      await Promise.all(
        seeded.slice(index, index + 250).map((record) => gateway.services.store.settle(record)),
      );
    }
  }, 120_000);
  afterAll(() => gateway.close());

  const admin = (path: string, init: Parameters<TestGateway["request"]>[1] = {}) =>
    gateway.request(path, { key: gateway.adminKey, ...init });

  it("pages every account's records exactly once, newest first with the request id on ties", async () => {
    const pages = await allPages(gateway, gateway.adminKey, `/v1/admin/usage?${RANGE}&limit=700`);
    expect(pages).toHaveLength(Math.ceil(SEEDED / 700));
    const rows = pages.flatMap((page) => page.data);
    const ids = rows.map((row) => row.request_id as string);
    expect(new Set(ids).size).toBe(SEEDED);
    expect([...ids].sort()).toEqual(seeded.map((record) => record.requestId).sort());
    for (let index = 1; index < rows.length; index++) {
      const [before, after] = [rows[index - 1]!, rows[index]!];
      const order =
        String(before.created_at).localeCompare(String(after.created_at)) ||
        String(before.request_id).localeCompare(String(after.request_id));
      expect(order).toBe(1);
    }
    // The records say whose they are, and what their client named.
    const first = rows.find((row) => row.request_id === "req_seed000000");
    expect(first).toMatchObject({
      account_id: bob.accountId,
      user: "end-user-7",
      metadata: { project: "alpha,beta", note: 'a "quote"\nand a line' },
      cost_micros: 100,
    });
    // The default page is 100 rows; the most is 1000.
    const firstPage = (await (await admin(`/v1/admin/usage?${RANGE}`)).json()) as ListBody;
    expect(firstPage.data).toHaveLength(100);
    await expectGatewayError(await admin("/v1/admin/usage?limit=1001"), {
      status: 400,
      type: "invalid_request_error",
      code: "invalid_parameter",
      param: "limit",
    });
  });

  it("filters by account, key, model, end user and time", async () => {
    const count = async (query: string, range = RANGE) => {
      const pages = await allPages(
        gateway,
        gateway.adminKey,
        `/v1/admin/usage?${range}&limit=1000&${query}`,
      );
      return pages.flatMap((page) => page.data);
    };
    const bobs = await count(`account=${bob.accountId}`);
    expect(bobs).toHaveLength(seeded.filter((r) => r.accountId === bob.accountId).length);
    expect(bobs.every((row) => row.account_id === bob.accountId)).toBe(true);
    expect(await count(`key=${alice.keyId}`)).toHaveLength(
      seeded.filter((r) => r.keyId === alice.keyId).length,
    );
    expect(await count("model=gpt-4o")).toHaveLength(
      seeded.filter((r) => r.model === "gpt-4o").length,
    );
    const users = await count("user=end-user-7");
    expect(users).toHaveLength(seeded.filter((r) => r.endUser === "end-user-7").length);
    expect(users.every((row) => row.user === "end-user-7")).toBe(true);
    const cut = START + 100 * 2_000_000;
    const before = await count("", `from=${new Date(START).toISOString()}&to=${cut / 1000}`);
    expect(before).toHaveLength(seeded.filter((r) => r.createdAt < cut).length);
  });

  it("groups by day, model, key and account, in the order of the group key, in pages", async () => {
    for (const by of ["day", "model", "key", "account"] as const) {
      const pages = await allPages(
        gateway,
        gateway.adminKey,
        `/v1/admin/usage?${RANGE}&group_by=${by}&limit=2`,
      );
      const groups = pages.flatMap((page) => page.data);
      expect(pages.every((page) => page.group_by === by)).toBe(true);
      const keys = groups.map((group) => String(group[by]));
      expect(new Set(keys).size).toBe(keys.length);
      const expected = new Map<string, { requests: number; cost: number; images: number }>();
      for (const record of seeded) {
        const key =
          by === "day"
            ? new Date(record.createdAt).toISOString().slice(0, 10)
            : by === "model"
              ? record.model
              : by === "key"
                ? (record.keyId ?? "")
                : record.accountId;
        const total = expected.get(key) ?? { requests: 0, cost: 0, images: 0 };
        total.requests += 1;
        total.cost += record.costMicros;
        total.images += record.images;
        expected.set(key, total);
      }
      expect([...keys].sort()).toEqual([...expected.keys()].sort());
      for (const group of groups) {
        const total = expected.get(String(group[by]));
        expect(group).toMatchObject({
          requests: total?.requests,
          cost_micros: total?.cost,
          images: total?.images,
        });
        expect(Object.keys(group)).toEqual([
          by,
          "requests",
          "input_tokens",
          "output_tokens",
          "images",
          "video_seconds",
          "characters",
          "cost_micros",
        ]);
      }
    }
  });

  it("exports CSV with the same columns and values as the JSON, row for row", async () => {
    const json = (
      await allPages(gateway, gateway.adminKey, `/v1/admin/usage?${RANGE}&limit=1000`)
    ).flatMap((page) => page.data);
    const response = await admin(`/v1/admin/usage?${RANGE}&format=csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(await response.text());
    expect(header).toEqual(Object.keys(json[0] ?? {}));
    expect(rows).toHaveLength(SEEDED);
    rows.forEach((row, index) => {
      const expected = json[index] ?? {};
      expect(row).toEqual((header ?? []).map((column) => asCell(expected[column])));
    });

    // `Accept: text/csv` asks for it too; grouped rows export the same way.
    const grouped = await admin(`/v1/admin/usage?${RANGE}&group_by=model`, {
      headers: { accept: "text/csv" },
    });
    const groupJson = (await (
      await admin(`/v1/admin/usage?${RANGE}&group_by=model`)
    ).json()) as ListBody;
    const [groupHeader, ...groupRows] = parseCsv(await grouped.text());
    expect(groupRows).toEqual(
      groupJson.data.map((group) => (groupHeader ?? []).map((column) => asCell(group[column]))),
    );
  });

  it("is for admins only", async () => {
    for (const query of ["", "?format=csv", "?group_by=account"]) {
      await expectGatewayError(
        await gateway.request(`/v1/admin/usage${query}`, { key: alice.key }),
        { status: 403, type: "permission_error", code: "admin_required" },
      );
    }
  });

  it("refuses a cursor it did not give out, and query parameters it does not take", async () => {
    for (const cursor of ["garbage!", "bm90LWpzb24", Buffer.from('["x"]').toString("base64url")]) {
      await expectGatewayError(await admin(`/v1/admin/usage?cursor=${cursor}`), {
        status: 400,
        type: "invalid_request_error",
        code: "invalid_request",
        param: "cursor",
      });
    }
    // A records cursor does not page groups.
    const page = (await (await admin(`/v1/admin/usage?${RANGE}&limit=1`)).json()) as ListBody;
    await expectGatewayError(
      await admin(`/v1/admin/usage?group_by=day&cursor=${page.next_cursor}`),
      { status: 400, type: "invalid_request_error", code: "invalid_request", param: "cursor" },
    );
    for (const param of ["after", "offset", "account", "page"]) {
      const body = await expectGatewayError(
        await gateway.request(`/v1/account/usage?${param}=1`, { key: alice.key }),
        { status: 400, type: "invalid_request_error", code: "invalid_request", param },
      );
      expect(body.message).toContain(param);
    }
  });

  it("pages and groups the account's own usage the same way, its records only", async () => {
    const pages = await allPages(gateway, alice.key, `/v1/account/usage?${RANGE}&limit=1000`);
    const ids = pages.flatMap((page) => page.data).map((row) => row.request_id);
    const own = seeded.filter((record) => record.accountId === alice.accountId);
    expect(new Set(ids).size).toBe(own.length);
    expect(ids).toHaveLength(own.length);
    const byModel = await allPages(
      gateway,
      alice.key,
      `/v1/account/usage?${RANGE}&group_by=model&limit=1`,
    );
    expect(
      byModel.flatMap((page) => page.data).reduce((sum, g) => sum + Number(g.requests), 0),
    ).toBe(own.length);
    const csv = await gateway.request(`/v1/account/usage?${RANGE}&format=csv`, { key: alice.key });
    expect(parseCsv(await csv.text())).toHaveLength(own.length + 1);
  });

  it("records the end user and metadata a real request names, through the official SDKs", async () => {
    const user = await createUser(gateway, { balanceMicros: 10_000_000 });
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: user.key, maxRetries: 0 });
    const chat = await openai.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hello" }],
        max_tokens: 5,
        user: "customer-1234",
        metadata: { order: "A-17", channel: "web" },
      })
      .withResponse();
    const embedding = await openai.embeddings
      .create({ model: "text-embedding-v4", input: "hello", user: "customer-9" })
      .withResponse();
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: user.key, maxRetries: 0 });
    const message = await anthropic.messages
      .create({
        model: "claude-sonnet-4-0",
        max_tokens: 5,
        messages: [{ role: "user", content: "hello" }],
        metadata: { user_id: "customer-1234" },
      })
      .withResponse();

    const list = (await (
      await gateway.request("/v1/account/usage?user=customer-1234", { key: user.key })
    ).json()) as ListBody;
    const byId = new Map(list.data.map((row) => [row.request_id, row]));
    expect(byId.get(chat.response.headers.get("x-request-id"))).toMatchObject({
      user: "customer-1234",
      metadata: { order: "A-17", channel: "web" },
    });
    expect(byId.get(message.response.headers.get("x-request-id"))).toMatchObject({
      user: "customer-1234",
      metadata: {},
    });
    expect(list.data).toHaveLength(2);
    const admins = (await (
      await admin(`/v1/admin/usage?user=customer-9&account=${user.accountId}`)
    ).json()) as ListBody;
    expect(admins.data.map((row) => row.request_id)).toEqual([
      embedding.response.headers.get("x-request-id"),
    ]);

    // Sizes are checked: 16 pairs at most, keys up to 64 characters, values up to 512.
    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    for (const metadata of [tooMany, { ["k".repeat(65)]: "v" }, { k: "v".repeat(513) }]) {
      const error = await openai.chat.completions
        .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], metadata })
        .catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toMatch(/^metadata/);
    }
    const longUser = await openai.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        user: "u".repeat(257),
      })
      .catch((thrown: unknown) => thrown);
    expect(longUser).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe("cursor pages on the other lists", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("the admin accounts list: email search, any case, every account once, total kept", async () => {
    const tag = `Find${Date.now()}`;
    const emails = ["a", "B", "c", "d", "e"].map((prefix) => `${prefix}.${tag}@Example.com`);
    for (const email of emails) await createUser(gateway, { email });
    await createUser(gateway, { email: `other${Date.now()}@example.com` });
    const pages = await allPages(
      gateway,
      gateway.adminKey,
      `/v1/admin/accounts?limit=2&email=${tag.toLowerCase()}`,
    );
    expect(pages).toHaveLength(3);
    const found = pages.flatMap((page) => page.data).map((row) => row.email);
    expect(found.map((email) => String(email).toLowerCase()).sort()).toEqual(
      emails.map((email) => email.toLowerCase()).sort(),
    );
    expect(pages[0]).toMatchObject({ total: 5, limit: 2, offset: 0 });
    // `%` and `_` are the characters themselves, not patterns.
    const literal = (await (
      await gateway.request("/v1/admin/accounts?email=%25", { key: gateway.adminKey })
    ).json()) as ListBody;
    expect(literal.data).toHaveLength(0);
    await expectGatewayError(
      await gateway.request(`/v1/admin/accounts?offset=1&cursor=${pages[0]?.next_cursor}`, {
        key: gateway.adminKey,
      }),
      { status: 400, type: "invalid_request_error", code: "invalid_request", param: "offset" },
    );
  });

  it("both key lists", async () => {
    const user = await createUser(gateway);
    for (const name of ["two", "three", "four"]) {
      await gateway.request("/v1/account/keys", { key: user.key, json: { name } });
    }
    for (const [key, path] of [
      [user.key, "/v1/account/keys?limit=3"],
      [gateway.adminKey, `/v1/admin/accounts/${user.accountId}/keys?limit=3`],
    ] as const) {
      const pages = await allPages(gateway, key, path);
      expect(pages.map((page) => page.data.length)).toEqual([3, 1]);
      expect(new Set(pages.flatMap((page) => page.data).map((row) => row.id)).size).toBe(4);
    }
    await expectGatewayError(
      await gateway.request("/v1/account/keys?cursor=nope", { key: user.key }),
      { status: 400, type: "invalid_request_error", code: "invalid_request", param: "cursor" },
    );
  });
});
