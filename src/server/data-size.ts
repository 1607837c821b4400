/**
 * The bytes a member's data directory holds on disk (WAL segments, snapshots, identity), for
 * `/v1/status`'s `dataSizeBytes` (etcdctl's "DB SIZE"). Read when asked: a status request is
 * rare, and the directory holds a handful of files.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** How deep into subdirectories to look. Why: the layout is two levels; 4 bounds a loop. */
const DEPTH_MAX = 4;
/** Most entries counted. Why: a few dozen segments in practice; stops a runaway directory. */
const ENTRIES_MAX = 100_000;

/** The sum of the sizes of the regular files under `dir`; 0 when it cannot be read. */
export function directorySizeBytes(dir: string): number {
  let total = 0;
  let entries = 0;
  const walk = (path: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      return;
    }
    for (const name of names) {
      if (++entries > ENTRIES_MAX) return;
      const full = join(path, name);
      try {
        const stat = statSync(full);
        if (stat.isFile()) total += stat.size;
        else if (stat.isDirectory() && depth < DEPTH_MAX) walk(full, depth + 1);
      } catch {
        // vanished between readdir and stat (a segment removed after a snapshot): skip it
      }
    }
  };
  walk(dir, 0);
  return total;
}
