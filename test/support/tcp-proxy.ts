/**
 * @module test/support/tcp-proxy
 * A TCP proxy in front of a server (PostgreSQL in the outage tests) that can be taken down and
 * brought back on the same port: down cuts every connection and drops new ones at once, as a
 * database restart does.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Accepts and forwards connections (again). */
  up(): Promise<void>;
  /** Cuts every open connection and drops new ones (the port stays this proxy's). */
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

/**
 * A proxy on a free port of 127.0.0.1 to `target`; with `listening: false` it starts down. It
 * keeps its port while down (a connection then is dropped at once, as a database that is gone
 * drops it), so no other process can take the port between a `down` and the next `up`.
 */
export async function startTcpProxy(
  target: { host: string; port: number },
  options: { listening?: boolean } = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let forwarding = options.listening !== false;
  const server: Server = createServer((client) => {
    if (!forwarding) {
      client.destroy();
      return;
    }
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
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  return {
    port: typeof address === "object" && address ? address.port : 0,
    async up() {
      forwarding = true;
    },
    async down() {
      forwarding = false;
      dropAll();
    },
    async close() {
      forwarding = false;
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
