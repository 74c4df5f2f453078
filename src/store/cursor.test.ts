import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors/index.ts";
import { decodeCursor, encodeCursor, pageOf } from "./cursor.ts";

describe("cursors", () => {
  it("round-trips a sort key", () => {
    const cursor = encodeCursor([1_700_000_000_000, "req_abc"]);
    expect(decodeCursor(cursor, ["number", "string"])).toEqual([1_700_000_000_000, "req_abc"]);
  });

  it.each([
    ["garbage", "not base64url!"],
    ["wrong arity", encodeCursor([1])],
    ["wrong types", encodeCursor(["1", "a"])],
    ["a fraction", encodeCursor([1.5, "a"])],
    ["not an array", Buffer.from('{"a":1}').toString("base64url")],
    ["too long", "a".repeat(2000)],
  ])("refuses %s with a 400 naming the parameter", (_name, cursor) => {
    try {
      decodeCursor(cursor, ["number", "string"], "after");
      expect.unreachable();
    } catch (error) {
      expect(GatewayError.isInstance(error) && error.code).toBe("invalid_request");
      expect(String((error as Error).message)).toContain("after");
    }
  });

  it("pages rows fetched with one extra", () => {
    const rows = [1, 2, 3].map((n) => ({ n }));
    const page = pageOf(
      rows,
      2,
      (row) => [row.n],
      (row) => row.n,
    );
    expect(page).toMatchObject({ object: "list", data: [1, 2], has_more: true });
    expect(decodeCursor(page.next_cursor!, ["number"])).toEqual([2]);
    expect(
      pageOf(
        rows,
        3,
        (row) => [row.n],
        (row) => row.n,
      ).next_cursor,
    ).toBeNull();
  });
});
