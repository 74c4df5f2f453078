/**
 * @module ops/listen-error
 * Turns a failed `listen` (port in use, no permission, an address this machine does not have, a
 * host name that does not resolve) into one sentence naming host:port and what to do, instead
 * of Node's raw `EADDRINUSE` and a stack.
 */

export class ListenError extends Error {
  override name = "ListenError";
}

export function describeListenError(error: unknown, host: string, port: number): Error {
  const code = (error as { code?: unknown } | undefined)?.code;
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const detail = (() => {
    switch (code) {
      case "EADDRINUSE":
        return "the port is already in use. Stop the process that holds it, or set PORT (server.port) to a free port (0 picks one).";
      case "EACCES":
        return "permission denied (ports below 1024 need privileges). Set PORT (server.port) to a port above 1023.";
      case "EADDRNOTAVAIL":
        return "this machine has no such address. Set HOST (server.host) to one of its addresses, 127.0.0.1 or 0.0.0.0.";
      case "ENOTFOUND":
      case "EAI_AGAIN":
      case "EAI_NONAME":
      case "EAI_FAIL":
        return `the host name '${host}' does not resolve. Set HOST (server.host) to an address such as 127.0.0.1 or 0.0.0.0.`;
      default:
        return undefined;
    }
  })();
  if (detail === undefined) return error instanceof Error ? error : new Error(String(error));
  return new ListenError(`Cannot listen on ${where}: ${detail}`, { cause: error });
}
