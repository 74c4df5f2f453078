/**
 * The unauthenticated account endpoints against hostile clients: bodies built to make a
 * pattern backtrack, password guessing and mass registration (per-address and per-email limits
 * with 429 and Retry-After), and login timing that does not tell which emails exist.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError } from "./support/expect-error.ts";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";
import { slowestHealthz } from "./support/healthz-probe.ts";

const PASSWORD = "a long enough password";

let counter = 0;
function uniqueEmail(): string {
  counter += 1;
  return `abuse-${counter}-${Date.now()}@example.com`;
}

describe("hostile emails", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it("answers an 80 KB backtracking email with 400 at once, and /healthz keeps answering", async () => {
    // "a@a.a.a.…a.@": a pattern with two greedy runs around the dot tries every split.
    const email = `a@${"a.".repeat(40_000)}@`;
    const started = performance.now();
    const hostile = Promise.all(
      [
        gateway.request("/v1/account/register", { json: { email, password: PASSWORD } }),
        gateway.request("/v1/account/login", { json: { email, password: PASSWORD } }),
        gateway.request("/v1/admin/accounts", { key: gateway.adminKey, json: { email } }),
        gateway.request("/v1/account/register", {
          json: { email: `${"a".repeat(200_000)}@b.co`, password: PASSWORD },
        }),
      ].map(async (pending) => {
        const response = await pending;
        const elapsed = performance.now() - started;
        await expectGatewayError(response, {
          status: 400,
          type: "invalid_request_error",
          code: "invalid_parameter",
          param: "email",
        });
        return elapsed;
      }),
    );
    const { slowestMs: slowest, result: elapsed } = await slowestHealthz(gateway, () => hostile);
    expect(Math.max(...elapsed)).toBeLessThan(1_500);
    expect(slowest).toBeLessThan(300);
  });

  it("accepts ordinary emails and refuses malformed ones", async () => {
    for (const email of ["dev@example.com", "a.b+c@sub.example.co", "x@y.z"]) {
      const response = await gateway.request("/v1/admin/accounts", {
        key: gateway.adminKey,
        json: { email },
      });
      expect(response.status, email).toBe(201);
    }
    for (const email of [
      "not-an-email",
      "@example.com",
      "a@b",
      "a@.com",
      "a@b.",
      "a@@b.co",
      "a@b@c.co",
      "a b@c.co",
      "a@b.c\u00a0",
      `${"a".repeat(250)}@b.co`,
    ]) {
      await expectGatewayError(
        await gateway.request("/v1/admin/accounts", { key: gateway.adminKey, json: { email } }),
        { status: 400, type: "invalid_request_error", code: "invalid_parameter", param: "email" },
      );
    }
  });
});

/** POSTs JSON from another loopback address (the whole of 127/8 is this host). */
function postFrom(
  localAddress: string,
  gateway: TestGateway,
  path: string,
  json: unknown,
): Promise<Response> {
  const url = new URL(path, gateway.url);
  const body = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        localAddress,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(incoming.headers))
            if (typeof value === "string") headers.set(name, value);
          resolve(new Response(Buffer.concat(chunks), { status: incoming.statusCode, headers }));
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

async function expectTooMany(response: Response, maxRetryAfter: number): Promise<void> {
  const error = await expectGatewayError(response, {
    status: 429,
    type: "rate_limit_error",
    code: "too_many_attempts",
    param: null,
  });
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
  expect(error.message).toContain(`${retryAfter} seconds`);
}

const NO_LIMITS = {
  login_attempts_per_minute: null,
  login_attempts_per_email_per_minute: null,
  register_attempts_per_hour: null,
  register_attempts_per_email_per_hour: null,
};

describe("login and registration attempt limits", () => {
  const gateways: TestGateway[] = [];
  async function gatewayWith(auth: Record<string, unknown>): Promise<TestGateway> {
    const gateway = await startTestGateway({ config: { auth: { ...NO_LIMITS, ...auth } } });
    gateways.push(gateway);
    return gateway;
  }
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
  });

  const login = (gateway: TestGateway, email: string, password = "the wrong password") =>
    gateway.request("/v1/account/login", { json: { email, password } });
  const register = (gateway: TestGateway, email: string) =>
    gateway.request("/v1/account/register", { json: { email, password: PASSWORD } });

  it("limits password guesses for one email out of the box (10 a minute)", async () => {
    const gateway = await startTestGateway();
    gateways.push(gateway);
    const email = uniqueEmail();
    expect((await register(gateway, email)).status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const response = await login(gateway, email);
      statuses.push(response.status);
      if (response.status === 429) await expectTooMany(response, 6);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
    // Refused before the password is checked: even the right one.
    await expectTooMany(await login(gateway, email, PASSWORD), 6);
  });

  it("limits login attempts per client address, whatever the email", async () => {
    const gateway = await gatewayWith({ login_attempts_per_minute: 4 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await login(gateway, uniqueEmail())).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    await expectTooMany(await login(gateway, uniqueEmail()), 15);
    // Another client is not affected.
    const other = await postFrom("127.0.0.2", gateway, "/v1/account/login", {
      email: uniqueEmail(),
      password: PASSWORD,
    });
    await expectGatewayError(other, {
      status: 401,
      type: "invalid_request_error",
      code: "invalid_credentials",
    });
  });

  it("limits login attempts per email across addresses, and lets them through again after Retry-After", async () => {
    const gateway = await gatewayWith({ login_attempts_per_email_per_minute: 20 });
    const victim = uniqueEmail();
    expect((await register(gateway, victim)).status).toBe(201);
    for (let i = 0; i < 20; i++) {
      const address = `127.0.0.${2 + (i % 5)}`;
      const guess = await postFrom(address, gateway, "/v1/account/login", {
        email: victim,
        password: `guess number ${i}`,
      });
      expect(guess.status).toBe(401);
    }
    const refused = await postFrom("127.0.0.9", gateway, "/v1/account/login", {
      email: victim,
      password: PASSWORD,
    });
    await expectTooMany(refused, 3);
    // Other emails are not affected.
    expect((await login(gateway, uniqueEmail())).status).toBe(401);
    await new Promise((resolve) =>
      setTimeout(resolve, Number(refused.headers.get("retry-after")) * 1000 + 100),
    );
    expect((await login(gateway, victim, PASSWORD)).status).toBe(200);
  });

  it("limits registrations per address and per email, creating nothing when refused", async () => {
    const gateway = await gatewayWith({
      register_attempts_per_hour: 3,
      register_attempts_per_email_per_hour: 2,
    });
    const emails = [uniqueEmail(), uniqueEmail(), uniqueEmail(), uniqueEmail()];
    const statuses = [];
    for (const email of emails) statuses.push((await register(gateway, email)).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    await expectTooMany(await register(gateway, uniqueEmail()), 1200);
    const accounts = await gateway.request("/v1/admin/accounts?limit=500", {
      key: gateway.adminKey,
    });
    const listed = ((await accounts.json()) as { data: { email: string }[] }).data;
    expect(listed.map((account) => account.email)).not.toContain(emails[3]);
    expect(listed).toHaveLength(4);

    // Per email: the same email from other addresses.
    const target = uniqueEmail();
    const again = [];
    for (const address of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
      again.push(
        await postFrom(address, gateway, "/v1/account/register", {
          email: target,
          password: PASSWORD,
        }),
      );
    }
    expect(again.map((response) => response.status)).toEqual([201, 409, 429]);
    await expectTooMany(again[2]!, 1800);
  });

  it("takes as long to refuse an unknown email as a wrong password", async () => {
    const gateway = await gatewayWith({});
    const known = uniqueEmail();
    expect((await register(gateway, known)).status).toBe(201);
    const passwordless = uniqueEmail();
    const created = await gateway.request("/v1/admin/accounts", {
      key: gateway.adminKey,
      json: { email: passwordless },
    });
    expect(created.status).toBe(201);
    const timings: Record<"known" | "unknown" | "passwordless", number[]> = {
      known: [],
      unknown: [],
      passwordless: [],
    };
    for (let round = 0; round < 7; round++) {
      for (const [kind, email] of [
        ["unknown", uniqueEmail()],
        ["known", known],
        ["passwordless", passwordless],
      ] as const) {
        const started = performance.now();
        const response = await login(gateway, email);
        await response.arrayBuffer();
        timings[kind].push(performance.now() - started);
        expect(response.status).toBe(401);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const known_ = median(timings.known);
    // Each does one scrypt verification: an unknown email is not answered measurably sooner.
    expect(median(timings.unknown)).toBeGreaterThan(known_ * 0.6);
    expect(median(timings.passwordless)).toBeGreaterThan(known_ * 0.6);
  });
});
