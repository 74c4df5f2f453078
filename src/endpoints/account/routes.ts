/**
 * @module endpoints/account/routes
 * Self-service account API: register (→ account + first key), login (→ short-lived session
 * token, or the web console's session cookie), logout, profile and balance, and key management.
 * Key endpoints accept a key or a session.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  generateApiKey,
  hashPassword,
  hashSecret,
  refuseSuspended,
  SESSION_PREFIX,
  verifyPassword,
} from "../../auth/index.ts";
import type { Services } from "../../core/services.ts";
import { GatewayError } from "../../errors/index.ts";
import { anonymousOrigin, auditOrigin, passwordOrigin } from "../../http/audit-origin.ts";
import { ListPageQuery, pageRequest, registerRoute } from "../../http/route.ts";
import { clearSessionCookie, setSessionCookie } from "../../http/session-cookie.ts";
import { pageFromList } from "../../store/cursor.ts";
import { randomBase62 } from "../../store/index.ts";
import { createAccount, describeAccount, EmailSchema } from "./accounts.ts";
import { registerBudgetRoutes } from "./budget-routes.ts";
import {
  describeKey,
  issueKey,
  KeyOptions,
  limitToCallerKey,
  resolveKeyAliases,
  resolveKeyModels,
} from "./issue-key.ts";
import { findManagedKey, revokeKeyTree, visibleKeys } from "./key-tree.ts";

const Credentials = Type.Object(
  {
    email: EmailSchema,
    password: Type.String({ minLength: 8, maxLength: 200 }),
  },
  { additionalProperties: false },
);

const LoginBody = Type.Object(
  {
    ...Credentials.properties,
    session: Type.Optional(
      Type.Literal("cookie", {
        description:
          "`cookie`: set the session as an HttpOnly cookie (for the web console) instead of returning the token.",
      }),
    ),
  },
  { additionalProperties: false },
);

async function loadAccount(services: Services, accountId: string) {
  const account = await services.store.findAccountById(accountId);
  if (!account) throw new GatewayError("invalid_api_key");
  return account;
}

export function registerAccountRoutes(app: FastifyInstance, services: Services): void {
  // Hashed once, up front, so even the first login for an unknown email does the same work as
  // any other: one scrypt verification.
  const dummyHash = hashPassword(randomBase62(16));
  registerBudgetRoutes(app, services);
  registerRoute(app, services, {
    method: "POST",
    path: "/v1/account/register",
    summary: "Create an account and its first API key (shown once).",
    tags: ["account"],
    auth: "none",
    body: Credentials,
    successStatus: 201,
    async handler({ body, request }) {
      if (!services.config.registration.enabled) throw new GatewayError("registration_disabled");
      services.attempts.attempt("register", request.ip, body.email);
      const account = await createAccount(services.store, {
        email: body.email,
        password: body.password,
        balanceMicros: services.config.registration.signup_credit_micros,
        reason: "signup credit",
        maxBalanceMicros: services.config.billing.max_balance_micros,
        audit: anonymousOrigin(request),
      });
      const { key, record } = await issueKey(
        services.store,
        account.id,
        { name: "default" },
        undefined,
        anonymousOrigin(request),
      );
      return { account: describeAccount(account), key, api_key: describeKey(record) };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/account/login",
    summary:
      'Exchange email and password for a short-lived session token (for the account endpoints); with `session: "cookie"` the session is set as an HttpOnly cookie instead.',
    tags: ["account"],
    auth: "none",
    body: LoginBody,
    async handler({ body, request, reply }) {
      services.attempts.attempt("login", request.ip, body.email);
      const account = await services.store.findAccountByEmail(body.email);
      // Hash even when there is no such account, so timing does not reveal which emails exist.
      const valid = await verifyPassword(
        body.password,
        account?.passwordHash ?? (await dummyHash),
      ).then((matches) => matches && Boolean(account?.passwordHash));
      if (!account || !valid) throw new GatewayError("invalid_credentials");
      refuseSuspended(account);
      const token = `${SESSION_PREFIX}${randomBase62(40)}`;
      const ttl = services.config.auth.session_ttl_seconds;
      const expiresAt = services.now() + ttl * 1000;
      await services.store.createSession(
        { tokenHash: hashSecret(token), accountId: account.id, expiresAt },
        passwordOrigin(request, account),
      );
      if (body.session === "cookie") {
        setSessionCookie(request, reply, token, ttl);
        return {
          token_type: "cookie",
          expires_in: ttl,
          expires_at: new Date(expiresAt).toISOString(),
          account: describeAccount(account),
        };
      }
      return {
        token,
        token_type: "bearer",
        expires_in: ttl,
        expires_at: new Date(expiresAt).toISOString(),
      };
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/account/logout",
    summary:
      "End the calling login session (bearer token or console cookie) and clear the cookie; 204. With a key, nothing is ended.",
    tags: ["account"],
    auth: "account",
    successStatus: 204,
    async handler({ caller, request, reply }) {
      if (caller.sessionHash)
        await services.store.deleteSession(caller.sessionHash, auditOrigin(request, caller));
      clearSessionCookie(request, reply);
      return undefined;
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account",
    summary: "The calling account: email, role and balance.",
    tags: ["account"],
    auth: "account",
    async handler({ caller }) {
      return describeAccount(await loadAccount(services, caller.accountId));
    },
  });

  registerRoute(app, services, {
    method: "GET",
    path: "/v1/account/keys",
    summary:
      "List the account's API keys (prefixes only), oldest first, in cursor pages; a key sees itself and the keys minted below it.",
    tags: ["account"],
    auth: "account",
    query: ListPageQuery,
    async handler({ caller, query }) {
      const keys = await visibleKeys(services.store, caller);
      return pageFromList(keys, pageRequest(query), (key) => [key.createdAt, key.id], describeKey);
    },
  });

  registerRoute(app, services, {
    method: "POST",
    path: "/v1/account/keys",
    summary: "Create an API key; the response holds the secret `key` once.",
    tags: ["account"],
    auth: "account",
    body: KeyOptions,
    successStatus: 201,
    async handler({ caller, body, request }) {
      const models = resolveKeyModels(services.catalog, body.models);
      const model_aliases = resolveKeyAliases(services.catalog, body.model_aliases);
      const input = limitToCallerKey({ ...body, models, model_aliases }, caller.key);
      // Every key is listed (revoked ones too): an account cannot grow its lists without bound.
      const max = services.config.auth.max_keys_per_account;
      if ((await services.store.countKeys(caller.accountId)) >= max)
        throw new GatewayError("key_limit_reached", { max });
      const { key, record } = await issueKey(
        services.store,
        caller.accountId,
        input,
        generateApiKey(),
        auditOrigin(request, caller),
      );
      return { ...describeKey(record), key };
    },
  });

  registerRoute(app, services, {
    method: "DELETE",
    path: "/v1/account/keys/:id",
    summary:
      "Revoke a key and every key minted below it; they stop working at once. A key may revoke itself and the keys below it.",
    tags: ["account"],
    auth: "account",
    async handler({ caller, params, request }) {
      const existing = await findManagedKey(services.store, caller, params.id ?? "");
      return describeKey(
        await revokeKeyTree(
          services.store,
          services.authenticator,
          existing,
          services.now(),
          auditOrigin(request, caller),
        ),
      );
    },
  });
}
