/**
 * @module telemetry/metrics-listener
 * The separate scrape listener (`metrics.listen`, e.g. `127.0.0.1:9464`): a bare HTTP server that
 * answers `GET /metrics` with the exposition and nothing else, without a token. It is meant for a
 * loopback or private address that only the Prometheus server reaches; the gateway's own port
 * keeps requiring a token or an admin key.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { GatewayMetrics } from "./gateway-metrics.ts";

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** `host:port`, `[v6]:port` or `:port` (all interfaces) → host and port; throws on anything else. */
export function parseListenAddress(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port > 65535)
    throw new Error(`metrics.listen must be host:port (e.g. 127.0.0.1:9464), not '${value}'`);
  return { host: match[1] ?? (match[2] || "0.0.0.0"), port };
}

export async function startMetricsListener(
  address: string,
  metrics: GatewayMetrics,
  onError: (error: unknown) => void,
): Promise<MetricsListener> {
  const { host, port } = parseListenAddress(address);
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      response.end("Only GET /metrics is served here.\n");
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => {
        response.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        onError(error);
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        response.end("metrics collection failed\n");
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shownHost}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
