/**
 * @module test/support/tcp-proxy
 * A TCP proxy in front of a server (PostgreSQL in the outage tests) that can be taken down and
 * brought back on the same port: down cuts every connection and refuses new ones, as a database
 * restart does.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Accepts and forwards connections (again). */
  up(): Promise<void>;
  /** Cuts every open connection and stops listening. */
  down(): Promise<void>;
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (nothing listens on it once this resolves). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 0;
}

/** A proxy on a free port of 127.0.0.1 to `target`; with `listening: false` it starts down. */
export async function startTcpProxy(
  target: { host: string; port: number },
  options: { listening?: boolean } = {},
): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const forward = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const proxy: TcpProxy = {
    port,
    async up() {
      if (server) return;
      const listening = createServer(forward);
      await new Promise<void>((resolve, reject) => {
        listening.once("error", reject);
        listening.listen(port, "127.0.0.1", resolve);
      });
      server = listening;
    },
    async down() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    close: () => proxy.down(),
  };
  if (options.listening !== false) await proxy.up();
  return proxy;
}
