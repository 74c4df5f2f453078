// The Node.js verifier of docs/videos.md, copied verbatim (webhook-docs-sample.test.ts checks
// that the page still holds exactly this code).
import { createHmac, timingSafeEqual } from "node:crypto";

/** True when `header` (Switchyard-Signature) signs `rawBody` (the bytes received) with `secret`. */
function verifySwitchyardSignature(secret, rawBody, header, toleranceSeconds = 300) {
  const fields = String(header ?? "")
    .split(",")
    .map((field) => field.trim().split("="));
  const timestamp = fields.find(([key]) => key === "t")?.[1] ?? "";
  const signatures = fields.filter(([key]) => key === "v1").map(([, value]) => value ?? "");
  if (!/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(
    createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex"),
  );
  return signatures.some((signature) => {
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export { verifySwitchyardSignature };
