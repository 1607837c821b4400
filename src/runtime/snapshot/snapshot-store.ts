/**
 * Snapshot files in a Storage directory (the server's `<data-dir>/snap`; the write-ahead log's
 * own directory when no other is given, as in the simulator): written
 * atomically (write `<name>.tmp`, sync it, rename it to its name, sync the directory), read back
 * newest first with every damaged file reported, and pruned to the newest few.
 */
import { AssertionError } from '../../core/assert.js';
import type { Snapshot } from '../../core/raft/types.js';
import type { Storage } from '../../ports/storage.js';
import { crc32c } from '../../core/checksum.js';
import {
  decodeSnapshot, encodeSnapshotHeader, encodeSnapshotTrailer, isSnapshotTempName,
  parseSnapshotFileName, snapshotFileName, snapshotTempName,
} from './snapshot-file.js';

export interface StoredSnapshot {
  readonly file: string;
  readonly snapshot: Snapshot;
}

export interface SnapshotScan {
  /** The newest valid snapshot, when there is one (at most one: see `scanSnapshots`). */
  readonly valid: readonly StoredSnapshot[];
  /** Files newer than it with a snapshot's name that do not hold one: damage, to report. */
  readonly damaged: readonly { readonly file: string; readonly reason: string }[];
}

/**
 * Reads the snapshot files in `storage`, newest first, until one is valid; never throws on bad
 * contents. Older files are not read: recovery uses the newest valid snapshot only, and each
 * file is a whole store (26 MiB for 100 k keys), so reading the one kept before it cost a
 * restart a second read, checksum and copy of that much (bench soak's restart phases).
 */
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
      break;
    }
  }
  return { valid, damaged };
}

/** Leftover temporary files of writes a crash interrupted (never renamed: never trusted). */
export function snapshotTempFiles(storage: Storage): string[] {
  return storage.list().filter(isSnapshotTempName);
}

/**
 * How the writer hands control back between pieces: `next` runs on a later event-loop turn
 * (the runtime passes its Timer's zero-delay timer). Without one, every piece is written at once.
 */
export type YieldTurn = (next: () => void) => void;

/**
 * Bytes of snapshot data checksummed and written per turn when a `YieldTurn` is given: a few
 * milliseconds of CRC-32C and a page-cache write. Unit: bytes.
 */
export const SNAPSHOT_WRITE_BYTES_PER_TURN = 1024 * 1024;

/**
 * Writes `snapshot` atomically and durably, then calls `done` (with the storage's error if
 * one failed). A crash before `done` leaves either no file of that name or the whole file. The
 * data goes in pieces of SNAPSHOT_WRITE_BYTES_PER_TURN, one per turn given `yieldTurn`, so a
 * large snapshot neither stalls the event loop nor is copied whole into a second buffer.
 */
export function writeSnapshotFile(storage: Storage, snapshot: Snapshot,
  done: (error?: Error) => void, yieldTurn?: YieldTurn): void {
  const { meta, data } = snapshot;
  const temp = snapshotTempName(meta.index, meta.term);
  const name = snapshotFileName(meta.index, meta.term);
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
  const header = encodeSnapshotHeader(meta, data.length);
  let crc = crc32c(header);
  if (!attempt(() => {
    storage.remove(temp);
    storage.append(temp, header);
  })) return;
  let at = 0;
  const finish = (): void => {
    if (!attempt(() => storage.append(temp, encodeSnapshotTrailer(crc)))) return;
    storage.sync(temp, (syncError) => {
      if (syncError !== undefined) return done(syncError);
      if (!attempt(() => storage.rename(temp, name))) return;
      storage.syncDir(done);
    });
  };
  const writePieces = (): void => {
    do {
      const end = Math.min(data.length, at + SNAPSHOT_WRITE_BYTES_PER_TURN);
      const piece = data.subarray(at, end);
      crc = crc32c(piece, 0, piece.length, crc);
      if (!attempt(() => storage.append(temp, piece))) return;
      at = end;
    } while (at < data.length && yieldTurn === undefined);
    if (at < data.length) return yieldTurn?.(writePieces);
    finish();
  };
  if (data.length === 0) return finish();
  writePieces();
}

/** Removes every snapshot file but the newest `keep` (and leftover temporary files). */
export function pruneSnapshots(storage: Storage, keep: number): void {
  const names = storage.list()
    .map((file) => ({ file, parsed: parseSnapshotFileName(file) }))
    .filter((x) => x.parsed !== undefined)
    .sort((a, b) => b.parsed!.index - a.parsed!.index);
  for (const { file } of names.slice(keep)) storage.remove(file);
}
