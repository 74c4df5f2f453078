/**
 * @module providers/kit/result-link
 * Whether a result link a vendor hands back (a finished video's `video_url`, a generated
 * image's URL) is one a client can fetch: an http(s) URL whose host, when it is an IP literal,
 * is not an address no client reaches — link-local (169.254/16, fe80::/10), a cloud metadata or
 * credential service (169.254.169.254, fd00:ec2::254, 100.100.100.200, …), unspecified,
 * multicast or reserved. Loopback and private networks pass: the sandbox serves its results on
 * 127.0.0.1, and operators run vendors on their own networks. Host names are not resolved.
 */
import { type AddressKind, classifyAddress } from "../../spec/index.ts";

/** `ok`, or why the link cannot be handed on. */
export type ResultLinkVerdict = "ok" | "not_web_link" | "unreachable_address";

const UNREACHABLE_KINDS: ReadonlySet<AddressKind> = new Set<AddressKind>([
  "link_local",
  "metadata",
  "unspecified",
  "multicast",
  "reserved",
]);

/** The kind of the URL's host when it is an IP literal (brackets of IPv6 dropped). */
function literalHostKind(url: URL): AddressKind | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  try {
    return classifyAddress(host);
  } catch {
    return undefined; // a host name: not judged (no DNS lookup here)
  }
}

/** Judges a vendor's result link; literal IPs in any form the URL parser accepts are normalized. */
export function judgeResultLink(value: string): ResultLinkVerdict {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "not_web_link";
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "")
    return "not_web_link";
  const kind = literalHostKind(url);
  return kind !== undefined && UNREACHABLE_KINDS.has(kind) ? "unreachable_address" : "ok";
}
