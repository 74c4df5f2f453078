/**
 * @module store/sqlite-owner
 * Which process serves an SQLite file. A gateway on SQLite keeps its holds in memory (the
 * `HoldBook`), so another process (the command line) cannot see what the requests in flight
 * hold. The gateway names itself in `<file>.gateway` (its pid) while it runs; a command that
 * would take money away checks it and sends the operator to the admin API, which knows the holds.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";

const ownerFile = (location: string) => `${location}.gateway`;

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
