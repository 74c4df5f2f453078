import { describe, expect, it } from "vitest";
import { judgeResultLink } from "./result-link.ts";

describe("judgeResultLink", () => {
  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "https://169.254.1.2/x.png",
    "http://[fe80::1]/x",
    "http://[fd00:ec2::254]/x",
    "http://[fd00:ec2::23]/x",
    "http://100.100.100.200/x",
    "http://168.63.129.16/x",
    "http://[::ffff:169.254.169.254]/x",
    "http://0.0.0.0/x",
    "http://224.0.0.1/x",
    "http://255.255.255.255/x",
  ])("refuses %s: no client can fetch it", (link) => {
    expect(judgeResultLink(link)).toBe("unreachable_address");
  });

  it.each([
    "http://127.0.0.1:8080/__results/a.mp4",
    "http://[::1]/a.mp4",
    "http://10.0.0.5/a.mp4",
    "http://192.168.1.9/a.mp4",
    "http://[fd12::5]/a.mp4",
    "https://dashscope-result.oss-cn-beijing.aliyuncs.com/a.png?Expires=1",
    "https://169.254.169.254.example.com/a.png",
  ])("passes %s (loopback, private and host names are not judged)", (link) => {
    expect(judgeResultLink(link)).toBe("ok");
  });

  it.each(["Internal error", "file:///etc/passwd", "javascript:alert(1)", "ftp://a.example/x", ""])(
    "refuses %j: not an http(s) link",
    (link) => {
      expect(judgeResultLink(link)).toBe("not_web_link");
    },
  );
});
