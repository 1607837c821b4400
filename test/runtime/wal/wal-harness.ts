/**
 * Shared helpers for the WAL tests: a simulated disk, entries whose data is derived from their
 * index and term (so damage is visible), and a way to wait for a sync in virtual time.
 */
import assert from 'node:assert/strict';
import { logIndex, nodeId, term, type LogIndex } from '../../../src/core/ids.js';
import type { Entry, EntryKind, HardState } from '../../../src/core/raft/types.js';
import type { Storage } from '../../../src/ports/storage.js';
import { Prng } from '../../../src/sim/prng.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import {
  SIM_STORAGE_DEFAULTS, SimStorage, type SimStorageOptions,
} from '../../../src/sim/sim-storage.js';
import type { WalConfig } from '../../../src/runtime/wal/config.js';
import { segmentSequence } from '../../../src/runtime/wal/segment.js';
import { openWal, type Wal } from '../../../src/runtime/wal/wal.js';

export const SMALL_WAL: WalConfig = Object.freeze({
  segmentBytesMax: 1024, recordBytesMax: 1024, manifestBytesMax: 1024,
});

export interface SimDisk {
  readonly scheduler: Scheduler;
  readonly storage: SimStorage;
}

export function simDisk(seed: number, options: SimStorageOptions = SIM_STORAGE_DEFAULTS): SimDisk {
  const scheduler = new Scheduler();
  return { scheduler, storage: new SimStorage(scheduler, new Prng(seed), options) };
}

const STEPS_MAX = 1_000_000;

/** Steps the scheduler until `done()` holds; fails if events run out first. */
export function runUntil(scheduler: Scheduler, done: () => boolean): void {
  for (let steps = 0; !done(); steps++) {
    assert.ok(steps < STEPS_MAX && scheduler.step(), 'scheduler ran out of events before done');
  }
}

/** Calls `wal.sync` and steps virtual time until it calls back; returns its error. */
export function syncNow(disk: SimDisk, wal: Wal): Error | undefined {
  let fired = false;
  let result: Error | undefined;
  wal.sync((error) => {
    fired = true;
    result = error;
  });
  runUntil(disk.scheduler, () => fired);
  return result;
}

/** The segment files in `storage`, in order (not the manifest or snapshot files). */
export function segmentsOf(storage: Storage): string[] {
  return storage.list().filter((name) => segmentSequence(name) !== undefined);
}

/** Opens the WAL, failing the test with the WAL's own message if it refuses. */
export function mustOpen(storage: Storage, config: WalConfig): Wal {
  const opened = openWal(storage, config);
  if ('error' in opened) assert.fail(opened.error.message);
  return opened.wal;
}

/** Data for `index` in `termValue`, `size` bytes long, distinct for each (index, term, salt). */
export function dataFor(index: number, termValue: number, size: number, salt = 0): Uint8Array {
  const out = new Uint8Array(size);
  let x = (index * 2654435761 + termValue * 40503 + salt * 97) >>> 0;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

export function entry(
  index: number,
  termValue: number,
  size = 8,
  kind: EntryKind = 'normal',
): Entry {
  const data = dataFor(index, termValue, size);
  return { index: logIndex(index), term: term(termValue), kind, data };
}

/** Entries `from`..`to` inclusive, all in `termValue`. */
export function entries(from: number, to: number, termValue: number, size = 8): Entry[] {
  const out: Entry[] = [];
  for (let i = from; i <= to; i++) out.push(entry(i, termValue, size));
  return out;
}

export function hardState(termValue: number, vote: string | undefined, commit: number): HardState {
  return {
    term: term(termValue),
    vote: vote === undefined ? undefined : nodeId(vote),
    commitIndex: logIndex(commit) as LogIndex,
  };
}

/** A comparable text form of a log: index, term, kind and data of each entry. */
export function describeLog(log: readonly Entry[]): string[] {
  return log.map((e) => `${e.index}/${e.term}/${e.kind}/${Buffer.from(e.data).toString('hex')}`);
}
