import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors/index.ts";
import { watchStoreAvailability } from "./store-availability.ts";

const refused = () => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

describe("watchStoreAvailability", () => {
  it("turns an unreachable database into store_unavailable, logging the outage once each way", async () => {
    let reachable = false;
    const events: string[] = [];
    const store = watchStoreAvailability(
      {
        dialect: "postgres",
        async countAccounts() {
          if (!reachable) throw refused();
          return 3;
        },
        async findAccountById(id: string) {
          throw new Error(`bug for ${id}`);
        },
      },
      { onDown: () => events.push("down"), onUp: () => events.push("up") },
    );
    expect(store.dialect).toBe("postgres");
    for (let i = 0; i < 3; i++) {
      const error = await store.countAccounts().catch((thrown: unknown) => thrown);
      expect(GatewayError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: "store_unavailable", status: 503 });
    }
    // Any other failure passes through unchanged.
    await expect(store.findAccountById("a")).rejects.toThrow("bug for a");
    reachable = true;
    expect(await store.countAccounts()).toBe(3);
    expect(await store.countAccounts()).toBe(3);
    expect(events).toEqual(["down", "up"]);
  });
});
