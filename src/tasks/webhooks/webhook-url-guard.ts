/**
 * @module tasks/webhooks/webhook-url-guard
 * Whether a `webhook_url` may be called: http or https only, no credentials, at most 2048
 * characters, and a host whose EVERY address is public (unless the operator's policy allows
 * loopback or private networks). Used at submission and again at each delivery, whose connection
 * is then pinned to the addresses checked here (a name that resolves elsewhere a moment later,
 * DNS rebinding, does not get through). Literal IPs in any form the WHATWG URL parser accepts
 * (`http://2130706433/`, `http://0x7f.1/`, `http://[::ffff:127.0.0.1]/`) arrive here normalized.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { type AddressKind, classifyAddress } from "../../spec/index.ts";

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The operator's address policy (config `webhooks.allow_loopback`, `webhooks.allow_private_addresses`). */
export interface WebhookAddressPolicy {
  /** 127.0.0.0/8 and ::1. */
  allowLoopback: boolean;
  /** Private, unique-local, carrier-grade NAT and link-local networks (never cloud metadata). */
  allowPrivate: boolean;
}

export const STRICT_WEBHOOK_POLICY: WebhookAddressPolicy = {
  allowLoopback: false,
  allowPrivate: false,
};

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a host name to all of its addresses (default: `dns.lookup` with `all: true`). */
export type WebhookResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** Longest a host name may take to resolve before the URL is refused. */
export const RESOLVE_TIMEOUT_MS = 10_000;

export const systemResolver: WebhookResolver = (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${hostname} did not resolve within ${RESOLVE_TIMEOUT_MS} ms`)),
      RESOLVE_TIMEOUT_MS,
    );
  });
  return Promise.race([lookup(hostname, { all: true }), deadline]).finally(() =>
    clearTimeout(timer),
  );
};

export interface CheckedWebhookUrl {
  url: URL;
  /** The URL's host (an IPv6 literal without its brackets). */
  hostname: string;
  /** Every address the host resolved to, all allowed by the policy. */
  addresses: ResolvedAddress[];
}

export type WebhookUrlRejection =
  | "too_long"
  | "invalid_url"
  | "unsupported_scheme"
  | "credentials"
  | "unresolvable"
  | "blocked_address";

/** A `webhook_url` the policy refuses; `message` is fit to show the client. */
export class WebhookUrlError extends Error {
  override readonly name = "WebhookUrlError";
  readonly reason: WebhookUrlRejection;
  /** The refused address (for logs: the client's message does not name it). */
  readonly address: string | undefined;

  constructor(reason: WebhookUrlRejection, message: string, address?: string) {
    super(message);
    this.reason = reason;
    this.address = address;
  }
}

const KIND_WORDS: Record<AddressKind, string> = {
  public: "a public address",
  loopback: "a loopback address",
  private: "a private-network address",
  link_local: "a link-local address",
  metadata: "a cloud metadata address",
  unspecified: "an unspecified address",
  multicast: "a multicast address",
  reserved: "a reserved address",
};

/** Whether the policy lets a webhook reach an address of this kind. */
export function addressAllowed(kind: AddressKind, policy: WebhookAddressPolicy): boolean {
  switch (kind) {
    case "public":
      return true;
    case "loopback":
      return policy.allowLoopback;
    case "private":
    case "link_local":
      return policy.allowPrivate;
    default:
      return false;
  }
}

function tooLong(length: number): WebhookUrlError {
  return new WebhookUrlError(
    "too_long",
    `webhook_url is ${length} characters long; at most ${MAX_WEBHOOK_URL_LENGTH} are accepted.`,
  );
}

function unresolvable(hostname: string): WebhookUrlError {
  return new WebhookUrlError("unresolvable", `webhook_url's host '${hostname}' does not resolve.`);
}

function parseWebhookUrl(raw: string): URL {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw tooLong(raw.length);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError("invalid_url", "webhook_url is not a valid absolute URL.");
  }
  // Normalizing can lengthen it (percent-encoding, punycode).
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) throw tooLong(url.href.length);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new WebhookUrlError(
      "unsupported_scheme",
      `webhook_url must be an http or https URL, not '${url.protocol.slice(0, -1)}'.`,
    );
  if (url.username !== "" || url.password !== "")
    throw new WebhookUrlError(
      "credentials",
      "webhook_url must not carry a user name or password; verify deliveries with the signature instead.",
    );
  return url;
}

/** The host as an IP literal (brackets of an IPv6 literal removed) or as a name. */
function bareHostname(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

async function resolveHost(hostname: string, resolve: WebhookResolver): Promise<ResolvedAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family }];
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(hostname);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) throw unresolvable(hostname);
  return addresses;
}

/**
 * Parses and checks `raw`, resolving its host; throws {@link WebhookUrlError} when any rule
 * fails. A host with several addresses is refused when any one of them is not allowed.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookAddressPolicy,
  options: { resolve?: WebhookResolver } = {},
): Promise<CheckedWebhookUrl> {
  const url = parseWebhookUrl(raw);
  const hostname = bareHostname(url);
  const addresses = await resolveHost(hostname, options.resolve ?? systemResolver);
  const literal = isIP(hostname) !== 0;
  for (const { address } of addresses) {
    let kind: AddressKind;
    try {
      kind = classifyAddress(address);
    } catch {
      throw unresolvable(hostname);
    }
    if (!addressAllowed(kind, policy)) {
      const subject = literal
        ? "webhook_url's host is"
        : `webhook_url's host '${hostname}' resolves to`;
      throw new WebhookUrlError(
        "blocked_address",
        `${subject} ${KIND_WORDS[kind]}; webhooks are only delivered to public addresses.`,
        address,
      );
    }
  }
  return { url, hostname, addresses };
}
