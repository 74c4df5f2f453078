// Which code the CLI runs: the precompiled build in dist/ (`npm run build`, which `npm ci` runs
// through `prepare`) when it is at least as new as every file under src/, else the TypeScript
// sources through tsx, so an edited checkout never runs yesterday's build.
// SWITCHYARD_RUN=sources or =build forces one of them.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The file `npm run build` writes last, dated when the build began. */
export const BUILD_STAMP = "BUILD";

/** The newest modification time (ms) of the files under `dir`, or 0 for none. */
function newestFileTime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const time = statSync(join(entry.parentPath, entry.name)).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

/**
 * "build" when `root/dist` holds a finished build no older than any file under `root/src` (or
 * there are no sources, as in the container image), else "sources". `forced` is SWITCHYARD_RUN.
 */
export function chooseEntry(root, forced) {
  if (forced === "sources" || forced === "build") return forced;
  if (forced !== undefined && forced !== "")
    throw new Error(`SWITCHYARD_RUN must be "sources" or "build", not "${forced}"`);
  const stamp = join(root, "dist", BUILD_STAMP);
  if (!existsSync(stamp)) return "sources";
  const sources = join(root, "src");
  if (!existsSync(sources)) return "build";
  return statSync(stamp).mtimeMs >= newestFileTime(sources) ? "build" : "sources";
}
