import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  applyChange,
  type ChangeEvent,
  type ChangeFeed,
  publishingInvalidations,
  watchConfigFile,
} from "./change-feed.ts";

describe("watchConfigFile (the reload fallback without Redis)", () => {
  it("calls back when the file changes, not before, and stops when told", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "switchyard-watch-")), "switchyard.yaml");
    writeFileSync(path, "log_level: info\n");
    let changes = 0;
    const stop = watchConfigFile(path, () => changes++, 20);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(changes).toBe(0);
    writeFileSync(path, "log_level: debug\nlimits:\n  default_rpm: 5\n");
    await expect.poll(() => changes).toBe(1);
    stop();
    writeFileSync(path, "log_level: warn\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(changes).toBe(1);
  });
});

describe("publishingInvalidations", () => {
  it("drops the key here and publishes the tick's invalidations as one event", async () => {
    const dropped: string[] = [];
    const published: ChangeEvent[] = [];
    const feed: ChangeFeed = { live: true, publish: (event) => published.push(event) };
    const authenticator = publishingInvalidations(
      { invalidate: (hash: string) => dropped.push(hash), other: () => "kept" },
      () => feed,
    );
    authenticator.invalidate("h1");
    authenticator.invalidate("h2");
    expect(dropped).toEqual(["h1", "h2"]);
    expect(authenticator.other()).toBe("kept");
    await Promise.resolve();
    expect(published).toEqual([{ type: "keys", hashes: ["h1", "h2"] }]);
  });
});

describe("applyChange", () => {
  it("drops another instance's keys from the local cache without publishing them again", async () => {
    const dropped: string[] = [];
    const published: ChangeEvent[] = [];
    const local = {
      invalidate: (hash: string) => dropped.push(hash),
      invalidateAll: () => dropped.push("*"),
    };
    const shared = publishingInvalidations(local, () => ({
      live: true,
      publish: (event) => published.push(event),
    }));
    let reloads = 0;
    const apply = applyChange({ authenticator: local, reload: () => reloads++ });
    apply({ type: "keys", hashes: ["h1", "h2"] });
    apply({ type: "resync" });
    apply({ type: "reload" });
    await Promise.resolve();
    expect(dropped).toEqual(["h1", "h2", "*"]);
    expect(reloads).toBe(1);
    expect(published).toEqual([]);
    // The wrapper, by contrast, publishes: it is for changes made here.
    shared.invalidate("h3");
    await Promise.resolve();
    expect(published).toEqual([{ type: "keys", hashes: ["h3"] }]);
  });
});
