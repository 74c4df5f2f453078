/**
 * @module store/sqlite-owner
 * Which process serves an SQLite file. A gateway on SQLite keeps its holds in memory (the
 * `HoldBook`), so another process (the command line) cannot see what the requests in flight
 * hold. The gateway names itself in `<file>.gateway` (its pid; beside the file a symbolic link
 * leads to) while it runs; a command that would take money away checks it and sends the
 * operator to the admin API, which knows the holds.
 */
import { readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";

/**
 * The claim beside the file itself, however it is named: a symbolic link (to the file or to a
 * folder on its path) opens the same database, so it must find the same claim. (A hard link is
 * another name SQLite itself cannot share a file under: its WAL is named after the path.)
 */
const ownerFile = (location: string) => {
  try {
    return `${realpathSync(location)}.gateway`;
  } catch {
    return `${location}.gateway`; // not there yet: nobody serves it
  }
};

/** Names this process as the file's gateway; returns the function that lets go of it. */
export function claimSqliteFile(location: string): () => void {
  if (location === ":memory:") return () => {};
  const file = ownerFile(location);
  writeFileSync(file, `${process.pid}\n`);
  return () => {
    // Only our own claim is removed (a newer gateway may have claimed the file since).
    if (sqliteFileOwner(location) === process.pid) rmSync(file, { force: true });
  };
}

/** The pid of the live gateway serving the file, if one is. */
export function sqliteFileOwner(location: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(ownerFile(location), "utf8"), 10);
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive, but another user's process.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}
