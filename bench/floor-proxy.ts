/**
 * @module bench/floor-proxy
 * The floor any Node gateway can reach: a bare undici pass-through proxy with no auth, no
 * validation, no billing. Forwards every request to `--upstream` and streams the answer back.
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";

const { values } = parseArgs({
  options: { port: { type: "string" }, upstream: { type: "string" } },
});
const upstream = values.upstream ?? "http://127.0.0.1:8090";
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000 });

const server = createServer(async (incoming, outgoing) => {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  try {
    const answer = await request(upstream + (incoming.url ?? "/"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body: Buffer.concat(chunks),
      dispatcher,
    });
    outgoing.writeHead(answer.statusCode, {
      "content-type": String(answer.headers["content-type"] ?? "application/json"),
    });
    for await (const chunk of answer.body) outgoing.write(chunk);
    outgoing.end();
  } catch (error) {
    outgoing.writeHead(502).end(String(error));
  }
});
server.listen(Number(values.port ?? 0), "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(
    `floor proxy listening on http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}\n`,
  );
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
