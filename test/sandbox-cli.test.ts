/**
 * `switchyard sandbox`: the provider sandbox on its own, as a real process.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  killLeftovers,
  makeTempDir,
  removeTempDirs,
  runCli,
  spawnCli,
} from "./support/cli-process.ts";

afterEach(killLeftovers);
afterAll(removeTempDirs);

const SANDBOX_BANNER = /^Switchyard sandbox listening on (http:\/\/127\.0\.0\.1:(\d+))$/;

describe("switchyard sandbox", { timeout: 60_000 }, () => {
  const cwd = makeTempDir("switchyard-sandbox-");

  it("listens on the real port with --port 0, answers chat completions and exits 0", async () => {
    const proc = spawnCli(["sandbox", "--port", "0"], { cwd, env: cleanEnv() });
    const { line } = await proc.waitForLine(SANDBOX_BANNER, 15_000);
    const [, url, port] = SANDBOX_BANNER.exec(line) ?? [];
    expect(Number(port)).toBeGreaterThan(0);

    const chat = (authorization?: string) =>
      fetch(`${url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "Hello sandbox" }],
        }),
      });
    const ok = await chat("Bearer sk-anything");
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as {
      object: string;
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number };
    };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]?.message.content).toMatch(/^Sandbox reply to Hello sandbox/);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect((await chat()).status).toBe(401);

    const exit = await proc.stop("SIGTERM", 10_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
  });

  it("rejects a port that is not a port with exit 2", async () => {
    for (const port of ["abc", "70000", "-1", "1.5"]) {
      const result = await runCli(["sandbox", `--port=${port}`], { cwd, env: cleanEnv() });
      expect({ port, code: result.code }).toEqual({ port, code: 2 });
      expect(result.stderr).toContain("--port");
    }
  });
});
