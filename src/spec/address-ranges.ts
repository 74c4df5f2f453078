/**
 * @module spec/address-ranges
 * Which kind of network an IP address belongs to (public, loopback, private, link-local, cloud
 * metadata, …). Shared by the webhook address policy (`tasks/webhooks`) and the check of the
 * result links vendors hand back (`providers/kit/result-link.ts`), so both judge an address the
 * same way. IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) are
 * judged by the IPv4 address they carry.
 */
import { isIPv4, isIPv6 } from "node:net";

export type AddressKind =
  | "public"
  | "loopback"
  /** RFC 1918, IPv6 unique-local fc00::/7, carrier-grade NAT 100.64/10, 192.0.0/24, 198.18/15. */
  | "private"
  /** 169.254/16 and fe80::/10 (without the metadata addresses below). */
  | "link_local"
  /**
   * Cloud instance metadata and credential services: 169.254.169.254, 169.254.170.2 (ECS),
   * 169.254.170.23 and fd00:ec2::23 (EKS Pod Identity), 100.100.100.200 (Alibaba),
   * 168.63.129.16 (Azure WireServer, a public address only the host answers), fd00:ec2::254.
   */
  | "metadata"
  /** 0.0.0.0/8 and `::` (on Linux, connecting to them reaches the host itself). */
  | "unspecified"
  /** 224/4 and ff00::/8. */
  | "multicast"
  /** 240/4 (incl. broadcast 255.255.255.255) and IPv6 forms that are not routable. */
  | "reserved";

interface Ipv4Range {
  base: number;
  prefix: number;
  kind: AddressKind;
}

function ipv4ToNumber(address: string): number {
  return address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0);
}

function range(cidr: string, kind: AddressKind): Ipv4Range {
  const [base, prefix] = cidr.split("/");
  return { base: ipv4ToNumber(base!), prefix: Number(prefix), kind };
}

/** Most specific first: the metadata hosts sit inside link-local and carrier-grade NAT. */
const IPV4_RANGES: readonly Ipv4Range[] = [
  range("169.254.169.254/32", "metadata"),
  range("169.254.170.2/32", "metadata"),
  range("169.254.170.23/32", "metadata"),
  range("100.100.100.200/32", "metadata"),
  range("168.63.129.16/32", "metadata"),
  range("0.0.0.0/8", "unspecified"),
  range("127.0.0.0/8", "loopback"),
  range("10.0.0.0/8", "private"),
  range("172.16.0.0/12", "private"),
  range("192.168.0.0/16", "private"),
  range("100.64.0.0/10", "private"),
  range("192.0.0.0/24", "private"),
  range("198.18.0.0/15", "private"),
  range("169.254.0.0/16", "link_local"),
  range("224.0.0.0/4", "multicast"),
  range("240.0.0.0/4", "reserved"),
];

function inIpv4Range(value: number, { base, prefix }: Ipv4Range): boolean {
  const size = 2 ** (32 - prefix);
  return value >= base && value < base + size;
}

function classifyIpv4(address: string): AddressKind {
  const value = ipv4ToNumber(address);
  return IPV4_RANGES.find((entry) => inIpv4Range(value, entry))?.kind ?? "public";
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, dotted tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const value = ipv4ToNumber(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(":").map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

function embeddedIpv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/** Whether the first groups of `groups` are exactly `prefix`. */
function startsWith(groups: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((group, index) => groups[index] === group);
}

function classifyIpv6(address: string): AddressKind {
  const groups = ipv6Groups(address);
  const [first, second, third] = groups as [number, number, number];
  const tail = embeddedIpv4(groups[6]!, groups[7]!);
  if (startsWith(groups, [0, 0, 0, 0, 0, 0])) {
    if (tail === "0.0.0.0") return "unspecified";
    if (tail === "0.0.0.1") return "loopback";
    // IPv4-compatible ::a.b.c.d (deprecated): judged by the IPv4 address it names.
    return classifyIpv4(tail);
  }
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d.
  if (startsWith(groups, [0, 0, 0, 0, 0, 0xffff]) || startsWith(groups, [0, 0, 0, 0, 0xffff, 0]))
    return classifyIpv4(tail);
  // NAT64: the well-known prefix 64:ff9b::/96 and the local-use prefix 64:ff9b:1::/48.
  if (startsWith(groups, [0x64, 0xff9b, 0, 0, 0, 0]) || startsWith(groups, [0x64, 0xff9b, 1]))
    return classifyIpv4(tail);
  // 6to4 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
  if (first === 0x2002) return classifyIpv4(embeddedIpv4(second, third));
  if (
    startsWith(groups, [0xfd00, 0xec2, 0, 0, 0, 0, 0]) &&
    (groups[7] === 0x254 || groups[7] === 0x23)
  )
    return "metadata";
  if ((first & 0xfe00) === 0xfc00) return "private";
  if ((first & 0xffc0) === 0xfe80) return "link_local";
  // Site-local fec0::/10, deprecated but still routed by some stacks.
  if ((first & 0xffc0) === 0xfec0) return "private";
  if ((first & 0xff00) === 0xff00) return "multicast";
  // Discard-only 100::/64.
  if (startsWith(groups, [0x100, 0, 0, 0])) return "reserved";
  return "public";
}

/** The kind of network `address` (an IPv4 or IPv6 literal) belongs to; throws on a non-IP. */
export function classifyAddress(address: string): AddressKind {
  if (isIPv4(address)) return classifyIpv4(address);
  if (isIPv6(address)) return classifyIpv6(address);
  throw new TypeError(`not an IP address: ${address}`);
}
