/**
 * @module bench/fastify-proxy
 * The floor proxy's work on Fastify 5, the gateway's framework: the JSON body parsed by Fastify,
 * sent on with undici, and the answer parsed and sent back as an object through Fastify's reply
 * (a stream is piped through as it comes). `npm run bench` measures it beside the bare proxy
 * with `BENCH_FASTIFY=1`, to tell what the framework costs from what the gateway's own work does.
 */
import { parseArgs } from "node:util";
import Fastify from "fastify";
import { Agent, request } from "undici";

const { values } = parseArgs({
  options: { port: { type: "string" }, upstream: { type: "string" } },
});
const upstream = values.upstream ?? "http://127.0.0.1:8090";
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
const app = Fastify({ logger: false });

app.post("/chat/completions", async (incoming, reply) => {
  const body = incoming.body as { stream?: unknown };
  const answer = await request(`${upstream}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
    body: JSON.stringify(body),
    dispatcher,
  });
  reply.code(answer.statusCode);
  if (body.stream === true)
    return reply
      .header("content-type", String(answer.headers["content-type"] ?? "text/event-stream"))
      .send(answer.body);
  return reply.send(await answer.body.json());
});

const address = await app.listen({ port: Number(values.port ?? 0), host: "127.0.0.1" });
process.stdout.write(`fastify proxy listening on ${address}\n`);
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
