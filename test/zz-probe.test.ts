import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, it } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
});
afterAll(() => g.close());
function raw(
  path: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(g.url);
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, method, headers },
      (res) => {
        let data = "";
        res.on("data", (c) => {
          data += c;
        });
        res.on("end", () => resolve(`${res.statusCode} ${JSON.stringify(res.headers)} ${data}`));
      },
    );
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}
it("probe", async () => {
  const k = g.adminKey;
  console.log("badurl", await raw("/%zz", "GET", {}));
  console.log("badurl2", await raw("/v1/models/%E0%A4%A", "GET", { authorization: `Bearer ${k}` }));
  console.log("405", await raw("/v1/chat/completions", "GET", {}));
  console.log(
    "utf16",
    await raw(
      "/v1/account/login",
      "POST",
      { "content-type": "application/json; charset=utf-16" },
      "{}",
    ),
  );
  console.log(
    "proto",
    await raw(
      "/v1/account/login",
      "POST",
      { "content-type": "application/json" },
      '{"__proto__": {"x":1}, "email":"a@b.co","password":"12345678"}',
    ),
  );
  console.log(
    "ctor",
    await raw(
      "/v1/account/login",
      "POST",
      { "content-type": "application/json" },
      '{"constructor": {"prototype": {"x":1}}}',
    ),
  );
  console.log("options", await raw("/v1/models", "OPTIONS", {}));
  console.log("head", await raw("/v1/models", "HEAD", {}));
  console.log(
    "delete-nobody",
    await raw("/v1/account/keys/abc", "DELETE", { authorization: `Bearer ${k}` }),
  );
  console.log("trailing", await raw("/v1/models/", "GET", { authorization: `Bearer ${k}` }));
});
