import { describe, expect, it } from "vitest";
import { classifyAddress } from "../../spec/index.ts";
import {
  checkWebhookUrl,
  type ResolvedAddress,
  STRICT_WEBHOOK_POLICY,
  type WebhookAddressPolicy,
  type WebhookResolver,
  WebhookUrlError,
} from "./webhook-url-guard.ts";

const LOOPBACK_ALLOWED: WebhookAddressPolicy = { allowLoopback: true, allowPrivate: false };
const PRIVATE_ALLOWED: WebhookAddressPolicy = { allowLoopback: false, allowPrivate: true };

function answers(...addresses: string[]): ResolvedAddress[] {
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
}

/** A resolver that knows only `hooks.example.com`, and records the names asked. */
function resolverFor(addresses: ResolvedAddress[]): WebhookResolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    if (hostname !== "hooks.example.com")
      throw Object.assign(new Error("nx"), { code: "ENOTFOUND" });
    return addresses;
  };
  return Object.assign(resolve, { asked });
}

/** A resolver that must not be called (the host is an IP literal). */
const noDns: WebhookResolver = async (hostname) => {
  throw new Error(`DNS asked for ${hostname}`);
};

async function refusal(
  url: string,
  policy = STRICT_WEBHOOK_POLICY,
  resolve: WebhookResolver = noDns,
): Promise<WebhookUrlError> {
  const error = await checkWebhookUrl(url, policy, { resolve }).then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof WebhookUrlError)) throw new Error(`${url} was not refused: ${error}`);
  return error;
}

describe("checkWebhookUrl: the URL itself", () => {
  it("accepts an https URL whose host resolves to public addresses", async () => {
    const resolve = resolverFor(answers("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"));
    const checked = await checkWebhookUrl(
      "https://hooks.example.com/videos?x=1",
      STRICT_WEBHOOK_POLICY,
      {
        resolve,
      },
    );
    expect(checked.url.href).toBe("https://hooks.example.com/videos?x=1");
    expect(checked.hostname).toBe("hooks.example.com");
    expect(checked.addresses.map((entry) => entry.address)).toEqual([
      "93.184.215.14",
      "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]);
    expect(resolve.asked).toEqual(["hooks.example.com"]);
  });

  it.each([
    ["ftp://hooks.example.com/", "unsupported_scheme", /http or https URL, not 'ftp'/],
    ["file:///etc/passwd", "unsupported_scheme", /not 'file'/],
    ["javascript:alert(1)", "unsupported_scheme", /not 'javascript'/],
    ["gopher://hooks.example.com:25/", "unsupported_scheme", /not 'gopher'/],
    ["//hooks.example.com/", "invalid_url", /not a valid absolute URL/],
    ["hooks.example.com/videos", "invalid_url", /not a valid absolute URL/],
    ["http://", "invalid_url", /not a valid absolute URL/],
    ["http://[::1/", "invalid_url", /not a valid absolute URL/],
    ["https://user:pass@hooks.example.com/", "credentials", /user name or password/],
    ["https://user@hooks.example.com/", "credentials", /user name or password/],
    ["https://:pass@hooks.example.com/", "credentials", /user name or password/],
    [`https://hooks.example.com/${"a".repeat(2048)}`, "too_long", /at most 2048/],
  ])("refuses %s (%s)", async (url, reason, message) => {
    const error = await refusal(url, LOOPBACK_ALLOWED, resolverFor(answers("93.184.215.14")));
    expect(error.reason).toBe(reason);
    expect(error.message).toMatch(message);
  });

  it("measures the length after normalizing too", async () => {
    const spaced = `https://hooks.example.com/${" x".repeat(1000)}`;
    expect(spaced.length).toBeLessThanOrEqual(2048);
    const error = await refusal(
      spaced,
      STRICT_WEBHOOK_POLICY,
      resolverFor(answers("93.184.215.14")),
    );
    expect(error.reason).toBe("too_long");
  });

  it("accepts a URL of exactly 2048 characters", async () => {
    const base = "https://hooks.example.com/";
    const url = base + "a".repeat(2048 - base.length);
    const checked = await checkWebhookUrl(url, STRICT_WEBHOOK_POLICY, {
      resolve: resolverFor(answers("93.184.215.14")),
    });
    expect(checked.url.href).toHaveLength(2048);
  });

  it("refuses a host that does not resolve, or resolves to nothing", async () => {
    const nx = await refusal("https://nowhere.invalid/", STRICT_WEBHOOK_POLICY, resolverFor([]));
    expect(nx.reason).toBe("unresolvable");
    expect(nx.message).toMatch(/'nowhere.invalid' does not resolve/);
    const empty = await refusal(
      "https://hooks.example.com/",
      STRICT_WEBHOOK_POLICY,
      resolverFor([]),
    );
    expect(empty.reason).toBe("unresolvable");
  });
});

describe("checkWebhookUrl: literal addresses in any spelling", () => {
  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://017700000001/", "loopback"],
    ["http://0177.0.0.01/", "loopback"],
    ["http://127.0.0.1./", "loopback"],
    ["http://①②⑦.0.0.1/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[0:0:0:0:0:0:0:1]:8080/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://[::127.0.0.1]/", "loopback"],
    ["http://[64:ff9b::127.0.0.1]/", "loopback"],
    ["http://[2002:7f00:1::]/", "loopback"],
    ["http://0.0.0.0/", "unspecified address"],
    ["http://0/", "unspecified address"],
    ["http://[::]/", "unspecified address"],
    ["http://10.0.0.5/", "private-network"],
    ["http://172.16.0.1/", "private-network"],
    ["http://172.31.255.255/", "private-network"],
    ["http://192.168.1.1/", "private-network"],
    ["http://3232235777/", "private-network"],
    ["http://100.64.0.1/", "private-network"],
    ["http://100.127.255.254/", "private-network"],
    ["http://[fd12:3456::1]/", "private-network"],
    ["http://[fc00::1]/", "private-network"],
    ["http://[::ffff:10.0.0.1]/", "private-network"],
    ["http://[64:ff9b::10.1.2.3]/", "private-network"],
    ["http://169.254.0.1/", "link-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://169.254.169.254/latest/meta-data/", "cloud metadata"],
    ["http://2852039166/", "cloud metadata"],
    ["http://[::ffff:169.254.169.254]/", "cloud metadata"],
    ["http://100.100.100.200/", "cloud metadata"],
    ["http://[fd00:ec2::254]/", "cloud metadata"],
    ["http://224.0.0.1/", "multicast"],
    ["http://239.255.255.250/", "multicast"],
    ["http://[ff02::1]/", "multicast"],
    ["http://240.0.0.1/", "reserved"],
    ["http://255.255.255.255/", "reserved"],
  ])("refuses %s as %s", async (url, words) => {
    const error = await refusal(url);
    expect(error.reason).toBe("blocked_address");
    expect(error.message).toContain(words);
    expect(error.message).toContain("only delivered to public addresses");
  });

  it.each([
    "http://8.8.8.8/",
    "http://134744072/",
    "http://172.32.0.1/",
    "http://100.128.0.1/",
    "http://[2606:4700:4700::1111]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[64:ff9b::8.8.8.8]/",
  ])("accepts the public literal %s without asking DNS", async (url) => {
    const checked = await checkWebhookUrl(url, STRICT_WEBHOOK_POLICY, { resolve: noDns });
    expect(checked.addresses).toHaveLength(1);
  });
});

describe("checkWebhookUrl: what the host resolves to", () => {
  it.each([
    ["one public and one private address", ["93.184.215.14", "10.0.0.7"]],
    ["one private and one public address", ["192.168.0.10", "93.184.215.14"]],
    ["a public IPv4 and a loopback IPv6", ["93.184.215.14", "::1"]],
    ["an IPv4-mapped loopback", ["::ffff:127.0.0.1"]],
    ["an IPv4-mapped private address (hex form)", ["::ffff:a00:1"]],
    ["a NAT64 form of the metadata address", ["64:ff9b::a9fe:a9fe"]],
    ["a link-local IPv6 with a zone", ["fe80::1%eth0"]],
    ["the metadata address", ["169.254.169.254"]],
    ["0.0.0.0", ["0.0.0.0"]],
  ])("refuses a host resolving to %s", async (_, addresses) => {
    const error = await refusal(
      "https://hooks.example.com/",
      STRICT_WEBHOOK_POLICY,
      resolverFor(answers(...addresses)),
    );
    expect(error.reason).toBe("blocked_address");
    expect(error.message).toMatch(/^webhook_url's host 'hooks.example.com' resolves to /);
    // The client is not told which address (the gateway's DNS view is not its business); logs are.
    expect(error.message).not.toContain(error.address!);
    expect(addresses).toContain(error.address);
  });

  it("refuses an answer that is not an IP address", async () => {
    const error = await refusal(
      "https://hooks.example.com/",
      STRICT_WEBHOOK_POLICY,
      resolverFor([{ address: "not-an-ip", family: 4 }]),
    );
    expect(error.reason).toBe("unresolvable");
  });
});

describe("checkWebhookUrl: the operator's policy", () => {
  it("allows loopback only with allowLoopback, and nothing else with it", async () => {
    await expect(
      checkWebhookUrl("http://127.0.0.1:8080/", LOOPBACK_ALLOWED),
    ).resolves.toMatchObject({
      addresses: [{ address: "127.0.0.1", family: 4 }],
    });
    await checkWebhookUrl("http://[::1]:8080/", LOOPBACK_ALLOWED);
    expect((await refusal("http://10.0.0.1/", LOOPBACK_ALLOWED)).reason).toBe("blocked_address");
    expect((await refusal("http://127.0.0.1/", PRIVATE_ALLOWED)).reason).toBe("blocked_address");
  });

  it("allows private and link-local networks with allowPrivate", async () => {
    for (const url of [
      "http://10.0.0.1/",
      "http://192.168.1.1/",
      "http://100.64.0.1/",
      "http://[fd00::1]/",
      "http://169.254.10.10/",
    ])
      await checkWebhookUrl(url, PRIVATE_ALLOWED, { resolve: noDns });
  });

  it("never allows metadata, unspecified, multicast or reserved addresses", async () => {
    const everything: WebhookAddressPolicy = { allowLoopback: true, allowPrivate: true };
    for (const url of [
      "http://169.254.169.254/",
      "http://169.254.170.2/",
      "http://100.100.100.200/",
      "http://[fd00:ec2::254]/",
      "http://0.0.0.0/",
      "http://[::]/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
    ])
      expect((await refusal(url, everything)).reason).toBe("blocked_address");
  });
});

describe("classifyAddress", () => {
  it.each([
    ["1.1.1.1", "public"],
    ["126.255.255.255", "public"],
    ["128.0.0.0", "public"],
    ["172.15.255.255", "public"],
    ["172.32.0.0", "public"],
    ["192.169.0.0", "public"],
    ["169.253.255.255", "public"],
    ["223.255.255.255", "public"],
    ["127.255.255.255", "loopback"],
    ["0.1.2.3", "unspecified"],
    ["192.0.0.8", "private"],
    ["198.19.255.255", "private"],
    ["169.254.170.2", "metadata"],
    ["169.254.170.23", "metadata"],
    ["168.63.129.16", "metadata"],
    ["168.63.129.17", "public"],
    ["fd00:ec2::23", "metadata"],
    ["fd00:ec2::24", "private"],
    ["2001:4860:4860::8888", "public"],
    ["2002:808:808::1", "public"],
    ["2002:a00:1::1", "private"],
    ["::ffff:0:7f00:1", "loopback"],
    ["64:ff9b:1::7f00:1", "loopback"],
    ["fec0::1", "private"],
    ["febf::1", "link_local"],
    ["100::1", "reserved"],
    ["FE80::ABCD", "link_local"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it("throws on a name", () => {
    expect(() => classifyAddress("localhost")).toThrow(TypeError);
  });
});
