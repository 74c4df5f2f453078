/**
 * @module cli/exit
 * The CLI's exit codes and how a failure maps onto them: 0 ok, 1 failure, 2 usage (a bad
 * option, a value the API would refuse, a bad configuration), 3 not found.
 */
import { GatewayError } from "../errors/index.ts";

export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3 } as const;

export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function usage(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

export function notFound(message: string): CliError {
  return new CliError(message, EXIT.notFound);
}

/** Catalogue codes that mean the input was refused, as the HTTP API refuses it with a 400. */
const REFUSED_INPUT = new Set(["invalid_parameter", "missing_parameter", "invalid_request"]);

export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (GatewayError.isInstance(error)) {
    if (error.status === 404) return EXIT.notFound;
    return REFUSED_INPUT.has(error.code) ? EXIT.usage : EXIT.failure;
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (error.name === "ConfigError") return EXIT.usage;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) return EXIT.usage;
  }
  return EXIT.failure;
}

let quietOnBrokenPipe = false;

/**
 * A reader that went away (`switchyard accounts list | head -3`) ends the command quietly with
 * exit 0, as Unix tools do, instead of an unhandled `write EPIPE` stack trace. Any other error
 * on the stream stays an error. Installed once, for the commands that print and end (not for
 * `start` or `sandbox`, whose servers a closed stdout must not stop abruptly).
 */
export function endQuietlyOnBrokenPipe(stream: NodeJS.WriteStream = process.stdout): void {
  if (quietOnBrokenPipe) return;
  quietOnBrokenPipe = true;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT.ok);
    throw error;
  });
}
