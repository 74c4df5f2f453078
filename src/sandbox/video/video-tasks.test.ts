/**
 * The video task store and its limits, in process: the state read off the clock, the bound on
 * the tasks kept (finished ones evicted first), the one-second poll window per key, the
 * `video-*` fault keys with their bounds, and `SANDBOX_VIDEO_SECONDS`.
 */
import { describe, expect, it } from "vitest";
import { parseFaultSpec } from "../faults.ts";
import { LinkSigner } from "../signed-links.ts";
import { DEFAULT_VIDEO_SECONDS, lifecycleSecondsFromEnv } from "./video-routes.ts";
import {
  formatTaskTime,
  PollLimiter,
  sandboxNowMs,
  TASK_CAPACITY,
  TASK_TTL_MS,
  VideoTaskStore,
  viewTask,
} from "./video-tasks.ts";

describe("video tasks", () => {
  const task = (plan: Parameters<VideoTaskStore<number>["create"]>[1]) => {
    const store = new VideoTaskStore<number>(new LinkSigner());
    const created = store.create(1, plan);
    return {
      ...created,
      submittedMs: 0,
      scheduledMs: plan.seconds * 250,
      endMs: plan.seconds * 1000,
    };
  };

  it("are PENDING for a quarter of their run, RUNNING, then finished", () => {
    const plain = task({ seconds: 4 });
    expect(viewTask(plain, 999)).toEqual({ phase: "PENDING", progress: 0 });
    expect(viewTask(plain, 1000)).toEqual({ phase: "RUNNING", scheduledMs: 1000, progress: 0 });
    expect(viewTask(plain, 2500)).toMatchObject({ phase: "RUNNING", progress: 50 });
    expect(viewTask(plain, 4000)).toEqual({
      phase: "SUCCEEDED",
      scheduledMs: 1000,
      endMs: 4000,
      progress: 100,
    });
    expect(viewTask(plain, TASK_TTL_MS)).toEqual({ phase: "EXPIRED", progress: 0 });
    const failing = task({ seconds: 4, failure: { code: "InternalError", message: "m" } });
    expect(viewTask(failing, 4000).phase).toBe("FAILED");
    const late = task({
      seconds: 4,
      failure: { code: "InvalidParameter", message: "m", onStart: true },
    });
    expect(viewTask(late, 1000)).toEqual({
      phase: "FAILED",
      scheduledMs: 1000,
      endMs: 1000,
      progress: 100,
    });
    const stuck = task({ seconds: 4, stuck: true });
    expect(viewTask(stuck, TASK_TTL_MS - 1)).toMatchObject({ phase: "RUNNING", progress: 99 });
  });

  it("cancel only while PENDING and count throttled polls down", () => {
    const store = new VideoTaskStore<string>(new LinkSigner());
    const queued = store.create("a", { seconds: 3600, throttledPolls: 2 });
    expect(store.takeThrottledPoll(queued)).toBe(true);
    expect(store.takeThrottledPoll(queued)).toBe(true);
    expect(store.takeThrottledPoll(queued)).toBe(false);
    expect(store.cancel(queued)).toBe(true);
    expect(store.view(queued).phase).toBe("CANCELED");
    expect(store.cancel(queued)).toBe(false);
    const finished = store.create("b", { seconds: 0 });
    expect(store.cancel(finished)).toBe(false);
  });

  it(`keep at most ${TASK_CAPACITY}, evicting the oldest finished ones first`, () => {
    const store = new VideoTaskStore<number>(new LinkSigner());
    const running = store.create(0, { seconds: 3600 });
    const finished = store.create(1, { seconds: 0 });
    for (let index = 2; index < TASK_CAPACITY; index++) store.create(index, { seconds: 3600 });
    expect(store.size).toBe(TASK_CAPACITY);
    store.create(TASK_CAPACITY, { seconds: 3600 });
    expect(store.size).toBe(TASK_CAPACITY);
    expect(store.get(finished.id)).toBeUndefined();
    expect(store.get(running.id)).toBeDefined();
    store.create(TASK_CAPACITY + 1, { seconds: 3600 }); // none finished: the oldest goes
    expect(store.get(running.id)).toBeUndefined();
    expect(store.size).toBe(TASK_CAPACITY);
  });

  it("read the sandbox clock to the millisecond and format DashScope's timestamps", () => {
    const links = new LinkSigner();
    links.advance(90);
    const drift = sandboxNowMs(links) - Date.now();
    expect(drift).toBeGreaterThanOrEqual(90_000);
    expect(drift).toBeLessThan(90_050);
    expect(formatTaskTime(Date.UTC(2025, 6, 27, 21, 5, 15, 212))).toBe("2025-07-27 21:05:15.212");
  });
});

describe("the poll limit", () => {
  it("allows 20 polls per key in any one second", () => {
    const limiter = new PollLimiter();
    const allowed = Array.from({ length: 25 }, (_, index) => limiter.allow("a", 1000 + index));
    expect(allowed.filter(Boolean)).toHaveLength(20);
    expect(limiter.allow("b", 1030)).toBe(true);
    expect(limiter.allow("a", 1999)).toBe(false);
    expect(limiter.allow("a", 2000)).toBe(true);
  });
});

describe("video fault keys", () => {
  it("parse with their bounds", () => {
    expect(
      parseFaultSpec(
        "video-seconds=0.2;video-fail=InternalError;video-moderated;video-stuck;video-throttle=3",
      ),
    ).toEqual({
      ok: true,
      fault: {
        hang: false,
        noUsage: false,
        videoSeconds: 0.2,
        videoFail: "InternalError",
        videoModerated: true,
        videoStuck: true,
        videoThrottle: 3,
      },
    });
    for (const bad of [
      "video-seconds=3601",
      "video-seconds=1e3",
      "video-seconds=-1",
      "video-throttle=1001",
      "video-fail=no spaces",
      "video-stuck=1",
    ]) {
      expect(parseFaultSpec(bad).ok, bad).toBe(false);
    }
  });

  it("take the default run from SANDBOX_VIDEO_SECONDS", () => {
    expect(lifecycleSecondsFromEnv(undefined)).toBe(DEFAULT_VIDEO_SECONDS);
    expect(lifecycleSecondsFromEnv("0.5")).toBe(0.5);
    expect(() => lifecycleSecondsFromEnv("soon")).toThrow(/SANDBOX_VIDEO_SECONDS/);
    expect(() => lifecycleSecondsFromEnv("4000")).toThrow(/0-3600/);
  });
});
