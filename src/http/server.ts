/**
 * @module http/server
 * The Fastify instance with the gateway's plumbing: request ids (the gateway's own, and a
 * client's valid `X-Request-Id` kept beside it, `request-id.ts`), the JSON body parser (with a
 * nesting limit), connection timeouts and the close after an early refusal
 * (`connection-guard.ts`), one error handler that renders every failure in the route's dialect,
 * and the 404/405 handler (a known path with another method answers 405 with `Allow`).
 * Endpoints are registered by `src/app.ts`.
 */
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import { GatewayError } from "../errors/index.ts";
import { UpstreamError } from "../spec/index.ts";
import { sortableBase62 } from "../store/index.ts";
import {
  type ConnectionLimits,
  clientErrorHandler,
  closeAfterEarlyAnswer,
  timeoutOptions,
} from "./connection-guard.ts";
import { type ErrorDialect, renderError } from "./error-renderer.ts";
import { jsonShapeProblem } from "./json-shape.ts";
import { clientRequestId } from "./request-id.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    dialect?: ErrorDialect;
  }
  interface FastifyRequest {
    /** The error-catalogue code of the error this request was answered with (for metrics). */
    errorCode?: string;
    /** The client's own valid request id (`http/request-id.ts`), when it sent one. */
    clientRequestId?: string;
  }
}

export interface HttpServerOptions extends ConnectionLimits {
  logger: Logger;
  bodyLimitBytes: number;
  /** Deepest nesting of objects and arrays in a JSON body. */
  maxJsonDepth: number;
  /** Most values (array elements and object members, roughly) a JSON body may hold. */
  maxJsonValues: number;
  /**
   * Which proxies' `X-Forwarded-For` to believe for the client's address: none (`false`), all
   * (`true`), this many hops, or these addresses and CIDR ranges.
   */
  trustProxy?: boolean | number | string[];
}

/** Maps Fastify's own errors (body parsing, limits, content type) onto the catalogue. */
function fromFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  bodyLimit: number,
): GatewayError | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new GatewayError("request_too_large", { limit: bodyLimit });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new GatewayError("unsupported_media_type", {
        contentType: request.headers["content-type"] ?? "(none)",
      });
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new GatewayError("invalid_json", { detail: "the body is empty." });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new GatewayError("invalid_request", {
        detail: "Content-Length does not match the body.",
      });
    default:
      return undefined;
  }
}

export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const newRequestId = () => `req_${sortableBase62(20)}`;
  const app = Fastify({
    ...timeoutOptions(options),
    clientErrorHandler: clientErrorHandler(newRequestId),
    loggerInstance: options.logger.child({ component: "http" }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // `request.log` is the server's logger itself, not a child per request (building a child
    // costs more than most of what a request does); log lines name the request id themselves.
    childLoggerFactory: (logger) => logger,
    bodyLimit: options.bodyLimitBytes,
    genReqId: newRequestId,
    requestIdHeader: false,
    trustProxy: trustProxyOption(options.trustProxy),
    return503OnClosing: false,
    forceCloseConnections: "idle",
    // Errors raised before routing (an undecodable URL) get the gateway shape too.
    frameworkErrors: (_error, request, reply: FastifyReply) => {
      const rendered = renderError(
        new GatewayError("invalid_request", { detail: "The request URL is not valid." }),
        "gateway",
        request.id,
      );
      void reply
        .code(rendered.status)
        .headers({ ...rendered.headers, "x-request-id": request.id })
        .send(rendered.body);
    },
  });

  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") {
      done(new GatewayError("invalid_json", { detail: "the body is empty." }), undefined);
      return;
    }
    // Before parsing: everything that reads the parsed body may recurse over it, and parsing
    // millions of tiny values alone holds the event loop for most of a second.
    const problem = jsonShapeProblem(text, {
      maxDepth: options.maxJsonDepth,
      maxValues: options.maxJsonValues,
    });
    if (problem === "too_deep") {
      done(new GatewayError("json_too_deep", { limit: options.maxJsonDepth }), undefined);
      return;
    }
    if (problem === "too_many_values") {
      done(new GatewayError("json_too_many_values", { limit: options.maxJsonValues }), undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(new GatewayError("invalid_json", { detail: (error as Error).message }), undefined);
    }
  });

  // A callback hook, not an async one: no promise per request for one header.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    const clientId = clientRequestId(request.headers);
    if (clientId !== undefined) {
      request.clientRequestId = clientId;
      reply.header("x-client-request-id", clientId);
    }
    done();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const dialect = request.dialect ?? request.routeOptions.config?.dialect ?? "gateway";
    const mapped = GatewayError.isInstance(error)
      ? error
      : fromFrameworkError(error, request, options.bodyLimitBytes);
    const rendered = renderError(mapped ?? error, dialect, request.id);
    request.errorCode = rendered.code;
    const upstream = upstreamCause(error);
    // The client went away while the upstream was still answering: nobody's failure to report.
    const clientGone = upstream?.kind === "aborted";
    const vendorFailure =
      !clientGone &&
      (upstream !== undefined || VENDOR_CODES.has(rendered.code)) &&
      (rendered.status >= 500 || rendered.status === 429);
    if (vendorFailure)
      // A vendor's failure is the vendor's: a warning with its status, not a stack trace.
      request.log.warn(
        {
          requestId: request.id,
          code: rendered.code,
          status: rendered.status,
          ...(upstream?.status !== undefined ? { upstreamStatus: upstream.status } : {}),
          ...(upstream?.vendorCode ? { vendorCode: upstream.vendorCode } : {}),
          ...(upstream?.upstreamRequestId ? { upstreamRequestId: upstream.upstreamRequestId } : {}),
          reason: error.message,
        },
        "upstream failed",
      );
    else if (clientGone)
      request.log.info({ requestId: request.id, code: rendered.code }, "client closed the request");
    else if (rendered.status >= 500 && (!mapped || mapped.code === "internal_error"))
      // The gateway's own fault (an unexpected exception): the one failure logged with a stack.
      request.log.error({ err: error, requestId: request.id }, "request failed");
    else if (mapped && rendered.status >= 500)
      // A catalogued 503 that is expected (draining, an open breaker, a vendor without a
      // credential, a store outage logged where it is noticed): a warning, without a stack.
      request.log.warn(
        {
          requestId: request.id,
          code: rendered.code,
          status: rendered.status,
          message: mapped.message,
        },
        "request failed",
      );
    else
      request.log.info(
        { requestId: request.id, code: rendered.code, status: rendered.status },
        "request rejected",
      );
    if (reply.sent || reply.raw.headersSent) return;
    // Answered before the body arrived (the key check runs first): the connection is closed, so
    // a client cannot keep it open by trickling the rest of a body nobody will read.
    if (!request.raw.complete) closeAfterEarlyAnswer(request, reply);
    void reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
  });

  // Every route's method and path pattern, so a known path with the wrong method answers 405.
  // Its error dialect too, so a wrong method on `/v1/messages` answers in Anthropic's shape.
  const routes: { method: string; pattern: RegExp; dialect: ErrorDialect | undefined }[] = [];
  app.addHook("onRoute", (route) => {
    const source = route.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "[^/]+");
    const pattern = new RegExp(`^${source}/?$`);
    const dialect = (route.config as { dialect?: ErrorDialect } | undefined)?.dialect;
    for (const method of [route.method].flat()) routes.push({ method, pattern, dialect });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const matching = routes.filter((route) => route.pattern.test(path));
    const allowed = [...new Set(matching.map((route) => route.method))];
    const error =
      allowed.length > 0
        ? new GatewayError(
            "method_not_allowed",
            { method: request.method, path },
            { headers: { allow: allowed.join(", ") } },
          )
        : new GatewayError("not_found", { method: request.method, path });
    const dialect = matching.find((route) => route.dialect)?.dialect ?? "gateway";
    const rendered = renderError(error, dialect, request.id);
    request.errorCode = rendered.code;
    if (!request.raw.complete) closeAfterEarlyAnswer(request, reply);
    void reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
  });

  return app;
}

/** Gateway 5xx codes that report a vendor's failure, not the gateway's. */
const VENDOR_CODES = new Set([
  "upstream_error",
  "upstream_timeout",
  "upstream_response_too_large",
  "structured_output_invalid",
]);

/** The vendor failure behind an error, if it is one (thrown as is, or wrapped). */
function upstreamCause(error: unknown): UpstreamError | undefined {
  if (UpstreamError.isInstance(error)) return error;
  const cause = error instanceof Error ? error.cause : undefined;
  return UpstreamError.isInstance(cause) ? cause : undefined;
}

/** Fastify's form of `trustProxy`: a hop count becomes "trust the first n hops". */
function trustProxyOption(
  trust: HttpServerOptions["trustProxy"],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === "number") return (_address, hop) => hop < trust;
  return trust ?? false;
}
