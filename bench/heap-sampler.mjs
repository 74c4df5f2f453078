/**
 * @module bench/heap-sampler
 * Preloaded into a gateway by `npm run bench:profile` with `PROFILE_HEAP=1`
 * (`node --import ./bench/heap-sampler.mjs`): on SIGUSR2 it starts V8's sampling heap profiler,
 * counting the objects garbage collection has already taken as well (what a request allocates,
 * not what it keeps), and when the process exits it writes the profile to `HEAP_PROFILE_FILE`.
 * With `HEAP_PROFILE_PROMOTED=1` the objects a scavenge took are left out: what is kept is what
 * outlived the young generation (promoted, or still alive at the end).
 * Plain JavaScript, so it loads into the precompiled build as it is.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const file = process.env.HEAP_PROFILE_FILE;
/** Only what outlived the young generation: objects a scavenge took are left out. */
const promotedOnly = process.env.HEAP_PROFILE_PROMOTED === "1";
if (file) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on("SIGUSR2", () => {
    if (sampling) return;
    sampling = true;
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !promotedOnly,
    });
  });
  process.on("exit", () => {
    if (!sampling) return;
    // The main thread's inspector answers synchronously, so the profile is written before exit.
    session.post("HeapProfiler.stopSampling", (error, result) => {
      if (!error) writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
