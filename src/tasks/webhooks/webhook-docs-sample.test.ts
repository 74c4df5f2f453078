/**
 * The verification recipe of docs/videos.md, run against a real delivery: the Node.js sample
 * (kept verbatim in `__fixtures__/docs-verify-sample.mjs`, and checked to still be the page's
 * code) and the Python sample (taken from the page and run with python3).
 */
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { verifySwitchyardSignature } from "./__fixtures__/docs-verify-sample.mjs";
import { deliverWebhook, EVENT_ID_HEADER, WEBHOOK_USER_AGENT } from "./webhook-sender.ts";
import { SIGNATURE_HEADER, signWebhook } from "./webhook-signature.ts";

const PAGE = readFileSync(new URL("../../../docs/videos.md", import.meta.url), "utf8");
const SAMPLE = readFileSync(
  new URL("./__fixtures__/docs-verify-sample.mjs", import.meta.url),
  "utf8",
);
const SECRET = "whsec_docs_sample_91b7";
// Non-ASCII on purpose: the signature covers the UTF-8 bytes.
const BODY = JSON.stringify({ id: "vid_doc", status: "succeeded", prompt: "café au lait ☕" });

/** The fenced code blocks of `language` on the page. */
function codeBlocks(language: string): string[] {
  return [...PAGE.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g"))].map(
    (match) => match[1]!,
  );
}

function hasPython(): boolean {
  try {
    execFileSync("python3", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const now = () => Math.floor(Date.now() / 1000);

let delivered: { headers: IncomingHttpHeaders; body: Buffer };

beforeAll(async () => {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    delivered = { headers: request.headers, body: Buffer.concat(chunks) };
    response.writeHead(204).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const result = await deliverWebhook({
    url: `http://127.0.0.1:${port}/hook`,
    body: BODY,
    secret: SECRET,
    eventId: "evt_doc",
    policy: { allowLoopback: true, allowPrivate: false },
  });
  expect(result.ok).toBe(true);
  server.close();
});

describe("docs/videos.md, Node.js sample", () => {
  it("is the code the test runs, verbatim", () => {
    const start = SAMPLE.indexOf("import { createHmac");
    const end = SAMPLE.indexOf("\nexport {");
    const copied = SAMPLE.slice(start, end);
    expect(copied).toContain("function verifySwitchyardSignature(");
    expect(codeBlocks("js")).toContain(copied);
  });

  it("accepts a real delivery's body and headers", () => {
    const header = delivered.headers["switchyard-signature"];
    expect(verifySwitchyardSignature(SECRET, delivered.body, header)).toBe(true);
  });

  it("refuses the delivery with another secret, a changed body or a stale timestamp", () => {
    const header = delivered.headers["switchyard-signature"] as string;
    expect(verifySwitchyardSignature("whsec_other", delivered.body, header)).toBe(false);
    const changed = Buffer.from(delivered.body.toString("utf8").replace("vid_doc", "vid_dog"));
    expect(verifySwitchyardSignature(SECRET, changed, header)).toBe(false);
    const old = now() - 301;
    expect(verifySwitchyardSignature(SECRET, delivered.body, signWebhook(SECRET, BODY, old))).toBe(
      false,
    );
    expect(verifySwitchyardSignature(SECRET, delivered.body, undefined)).toBe(false);
    // Current timestamps, so the signature comparison itself is reached: 64 characters, and
    // 64 bytes in 32 two-byte characters.
    for (const junk of ["é".repeat(64), "é".repeat(32)])
      expect(verifySwitchyardSignature(SECRET, delivered.body, `t=${now()},v1=${junk}`)).toBe(
        false,
      );
  });

  it("names the headers the sender sends", () => {
    for (const name of ["Content-Type", SIGNATURE_HEADER, EVENT_ID_HEADER, WEBHOOK_USER_AGENT])
      expect(PAGE).toContain(`\`${name}\``);
  });
});

describe.skipIf(!hasPython())("docs/videos.md, Python sample", () => {
  const [python] = codeBlocks("python");
  /** Runs the page's function on each case in one python3 process (starting one is slow). */
  const verifyAll = (cases: { secret: string; body: Buffer; header: string }[]): boolean[] => {
    const driver = [
      "import base64, json, sys",
      "cases = json.load(sys.stdin)",
      "print(json.dumps([verify_switchyard_signature(c['secret'], base64.b64decode(c['body']), c['header']) for c in cases]))",
    ].join("\n");
    const input = JSON.stringify(cases.map((c) => ({ ...c, body: c.body.toString("base64") })));
    const output = execFileSync("python3", ["-c", `${python}\n${driver}`], {
      input,
      encoding: "utf8",
    });
    return JSON.parse(output) as boolean[];
  };

  it("accepts a real delivery and refuses it with another secret or a changed body", () => {
    const header = delivered.headers["switchyard-signature"] as string;
    const body = delivered.body;
    expect(
      verifyAll([
        { secret: SECRET, body, header },
        { secret: "whsec_other", body, header },
        { secret: SECRET, body: Buffer.concat([body, Buffer.from(" ")]), header },
        { secret: SECRET, body, header: `t=${now()},v1=${"é".repeat(64)}` },
        { secret: SECRET, body, header: `t=${now()},v1=${"é".repeat(32)}` },
        {
          secret: SECRET,
          body,
          header: signWebhook(SECRET, BODY, now() - 301),
        },
      ]),
    ).toEqual([true, false, false, false, false, false]);
  });
});
