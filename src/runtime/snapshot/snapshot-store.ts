/**
 * Snapshot files in a Storage directory (beside the write-ahead log's segments): written
 * atomically (write `<name>.tmp`, sync it, rename it to its name, sync the directory), read back
 * newest first with every damaged file reported, and pruned to the newest few.
 */
import { AssertionError } from '../../core/assert.js';
import type { Snapshot } from '../../core/raft/types.js';
import type { Storage } from '../../ports/storage.js';
import {
  decodeSnapshot, encodeSnapshot, isSnapshotTempName, parseSnapshotFileName, snapshotFileName,
  snapshotTempName,
} from './snapshot-file.js';

export interface StoredSnapshot {
  readonly file: string;
  readonly snapshot: Snapshot;
}

export interface SnapshotScan {
  /** Valid snapshots, newest (highest index) first. */
  readonly valid: readonly StoredSnapshot[];
  /** Files with a snapshot's name that do not hold one: damage, to report. */
  readonly damaged: readonly { readonly file: string; readonly reason: string }[];
}

/** Reads every snapshot file in `storage`, newest first; never throws on bad contents. */
export function scanSnapshots(storage: Storage): SnapshotScan {
  const named = storage.list()
    .map((file) => ({ file, parsed: parseSnapshotFileName(file) }))
    .filter((x): x is { file: string; parsed: NonNullable<typeof x.parsed> } =>
      x.parsed !== undefined)
    .sort((a, b) => b.parsed.index - a.parsed.index || b.parsed.term - a.parsed.term);
  const valid: StoredSnapshot[] = [];
  const damaged: { file: string; reason: string }[] = [];
  for (const { file, parsed } of named) {
    const decoded = decodeSnapshot(storage.read(file) ?? new Uint8Array(0));
    if (typeof decoded === 'string') {
      damaged.push({ file, reason: decoded });
    } else if (decoded.meta.index !== parsed.index || decoded.meta.term !== parsed.term) {
      damaged.push({ file, reason: `holds snapshot ${decoded.meta.index}/${decoded.meta.term}` });
    } else {
      valid.push({ file, snapshot: decoded });
    }
  }
  return { valid, damaged };
}

/** Leftover temporary files of writes a crash interrupted (never renamed: never trusted). */
export function snapshotTempFiles(storage: Storage): string[] {
  return storage.list().filter(isSnapshotTempName);
}

/**
 * Writes `snapshot` atomically and durably, then calls `done` (with the storage's error if
 * one failed). A crash before `done` leaves either no file of that name or the whole file.
 */
export function writeSnapshotFile(storage: Storage, snapshot: Snapshot,
  done: (error?: Error) => void): void {
  const { index, term } = snapshot.meta;
  const temp = snapshotTempName(index, term);
  const name = snapshotFileName(index, term);
  const attempt = (step: () => void): boolean => {
    try {
      step();
      return true;
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      done(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  };
  if (!attempt(() => {
    storage.remove(temp);
    storage.append(temp, encodeSnapshot(snapshot));
  })) return;
  storage.sync(temp, (syncError) => {
    if (syncError !== undefined) return done(syncError);
    if (!attempt(() => storage.rename(temp, name))) return;
    storage.syncDir(done);
  });
}

/** Removes every snapshot file but the newest `keep` (and leftover temporary files). */
export function pruneSnapshots(storage: Storage, keep: number): void {
  const names = storage.list()
    .map((file) => ({ file, parsed: parseSnapshotFileName(file) }))
    .filter((x) => x.parsed !== undefined)
    .sort((a, b) => b.parsed!.index - a.parsed!.index);
  for (const { file } of names.slice(keep)) storage.remove(file);
}
