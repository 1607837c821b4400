/**
 * wal: snapshots. Goal: snapshot files are written atomically (write, sync, rename, sync the
 * directory) so a crash leaves the whole file or none; compaction drops whole segments below
 * the snapshots kept; recovery loads the newest valid snapshot plus the log after it (falling
 * back to the older one when the newest is damaged), an installed snapshot replaces the log,
 * and a log that needs a snapshot nobody kept refuses to open. Method: the WAL over SimStorage
 * with small segments; crashes from SimStorage (unsynced writes and directory changes undone).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { Snapshot } from '../../../src/core/raft/types.js';
import { openWal } from '../../../src/runtime/wal/wal.js';
import type { Wal } from '../../../src/runtime/wal/wal.js';
import { snapshotFileName } from '../../../src/runtime/snapshot/snapshot-file.js';
import { SNAPSHOT_WRITE_BYTES_PER_TURN } from '../../../src/runtime/snapshot/snapshot-store.js';
import { Prng } from '../../../src/sim/prng.js';
import { SIM_STORAGE_DEFAULTS, SimStorage } from '../../../src/sim/sim-storage.js';
import {
  SMALL_WAL, describeLog, entries, hardState, mustOpen, runUntil, simDisk, syncNow,
  type SimDisk,
} from './wal-harness.js';

const membership = { voters: [nodeId('n1'), nodeId('n2'), nodeId('n3')], learners: [] };

function snapshotAt(index: number, termValue: number, text = `state@${index}`): Snapshot {
  return { meta: { index: logIndex(index), term: term(termValue), membership },
    data: new TextEncoder().encode(text) };
}

/** Calls `operation(done)` and steps virtual time until it calls back; returns its error. */
function await_(disk: SimDisk, operation: (done: (error?: Error) => void) => void): Error | undefined {
  let fired = false;
  let result: Error | undefined;
  operation((error) => {
    fired = true;
    result = error;
  });
  runUntil(disk.scheduler, () => fired);
  return result;
}

/** A WAL of 1 KiB segments holding entries 1..`last` of term 1, committed, synced. */
function filled(disk: SimDisk, last: number): Wal {
  const wal = mustOpen(disk.storage, SMALL_WAL);
  for (let i = 1; i <= last; i += 10) {
    wal.append(entries(i, Math.min(last, i + 9), 1, 40));
    wal.saveHardState(hardState(1, 'n1', Math.min(last, i + 9)));
    syncNow(disk, wal);
  }
  return wal;
}

const segmentsOf = (disk: SimDisk): string[] => disk.storage.list().filter((f) => f.startsWith('wal-'));
const snapshotsOf = (disk: SimDisk): string[] => disk.storage.list().filter((f) => f.startsWith('snap-'));

describe('wal: snapshots', () => {
  test('recovery loads the newest snapshot plus the log after it; old segments are dropped', () => {
    const disk = simDisk(1);
    const wal = filled(disk, 100);
    const segmentsBefore = segmentsOf(disk).length;
    assert.ok(segmentsBefore > 4);
    assert.equal(await_(disk, (done) => wal.saveSnapshot(snapshotAt(40, 1), done)), undefined);
    runUntil(disk.scheduler, () => disk.scheduler.pending === 0);
    const afterFirst = segmentsOf(disk);
    assert.ok(afterFirst.length < segmentsBefore, `segments before 40 dropped: ${afterFirst}`);
    assert.equal(await_(disk, (done) => wal.saveSnapshot(snapshotAt(80, 1), done)), undefined);
    runUntil(disk.scheduler, () => disk.scheduler.pending === 0);
    // Two snapshots kept: the log is kept from the older one (40), for a fallback.
    assert.deepEqual(segmentsOf(disk), afterFirst);
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.equal(reopened.recovered.snapshot?.meta.index, 80);
    assert.deepEqual(describeLog(reopened.recovered.entries), describeLog(entries(81, 100, 1, 40)));
    assert.deepEqual(reopened.recovered.hardState, hardState(1, 'n1', 100));
    assert.equal(reopened.lastIndex(), 100);
  });

  test('only the two newest snapshot files are kept', () => {
    const disk = simDisk(2);
    const wal = filled(disk, 60);
    for (const at of [10, 20, 30, 40]) await_(disk, (done) => wal.saveSnapshot(snapshotAt(at, 1), done));
    assert.deepEqual(snapshotsOf(disk), [snapshotFileName(logIndex(30), term(1)),
      snapshotFileName(logIndex(40), term(1))]);
  });

  test('a crash during the snapshot write leaves no snapshot; the leftover is removed', () => {
    const disk = simDisk(3);
    const wal = filled(disk, 30);
    wal.saveSnapshot(snapshotAt(20, 1), () => assert.fail('the crash comes first'));
    assert.ok(disk.storage.list().some((f) => f.endsWith('.snap.tmp')));
    disk.storage.crash();
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.equal(reopened.recovered.snapshot, undefined);
    assert.equal(reopened.recovered.entries.length, 30);
    assert.ok(!disk.storage.list().some((f) => f.includes('.snap')));
  });

  test('snapshots in their own directory: recovery reads them there, segments still go', () => {
    const disk = simDisk(11);
    const snapDisk = { scheduler: disk.scheduler,
      storage: new SimStorage(disk.scheduler, new Prng(12), SIM_STORAGE_DEFAULTS) };
    const options = { snapshotStorage: snapDisk.storage };
    const opened = openWal(disk.storage, SMALL_WAL, options);
    assert.ok(!('error' in opened));
    const wal = opened.wal;
    for (let i = 1; i <= 100; i += 10) {
      wal.append(entries(i, i + 9, 1, 40));
      wal.saveHardState(hardState(1, 'n1', i + 9));
      syncNow(disk, wal);
    }
    const segmentsBefore = segmentsOf(disk).length;
    assert.equal(await_(disk, (done) => wal.saveSnapshot(snapshotAt(40, 1), done)), undefined);
    assert.equal(await_(disk, (done) => wal.saveSnapshot(snapshotAt(80, 1), done)), undefined);
    runUntil(disk.scheduler, () => segmentsOf(disk).length < segmentsBefore);
    assert.deepEqual(snapshotsOf(disk), []);
    assert.deepEqual(snapshotsOf(snapDisk).length, 2);
    disk.storage.crash();
    snapDisk.storage.crash();
    const reopened = openWal(disk.storage, SMALL_WAL, options);
    assert.ok(!('error' in reopened));
    assert.equal(reopened.wal.recovered.snapshot?.meta.index, 80);
    assert.equal(reopened.wal.recovered.entries[0]?.index, 81);
  });

  test('a snapshot written a piece a turn: a crash mid-way leaves none, then it completes', () => {
    const disk = simDisk(13);
    const turns: (() => void)[] = [];
    const yieldTurn = (next: () => void): void => {
      turns.push(next);
    };
    const opened = openWal(disk.storage, SMALL_WAL, { yieldTurn });
    assert.ok(!('error' in opened));
    const wal = opened.wal;
    wal.append(entries(1, 10, 1, 40));
    wal.saveHardState(hardState(1, 'n1', 10));
    syncNow(disk, wal);
    const big = snapshotAt(10, 1, 'x'.repeat(2.5 * SNAPSHOT_WRITE_BYTES_PER_TURN));
    let saved = false;
    wal.saveSnapshot(big, (error) => {
      assert.equal(error, undefined);
      saved = true;
    });
    assert.equal(turns.length, 1, 'the first piece, then a turn');
    turns.shift()!();
    assert.equal(turns.length, 1, 'the second piece, then a turn');
    disk.storage.crash();
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.equal(reopened.recovered.snapshot, undefined);
    assert.ok(!disk.storage.list().some((f) => f.includes('.snap')));
    // Again, to the end: the file decodes to the very snapshot.
    const again = openWal(disk.storage, SMALL_WAL, { yieldTurn });
    assert.ok(!('error' in again));
    turns.length = 0;
    again.wal.saveSnapshot(big, (error) => {
      assert.equal(error, undefined);
      saved = true;
    });
    runUntil(disk.scheduler, () => {
      turns.shift()?.();
      return saved;
    });
    const final = mustOpen(disk.storage, SMALL_WAL);
    assert.deepEqual(final.recovered.snapshot, big);
  });

  test('an installed snapshot replaces the whole log; entries after it follow', () => {
    const disk = simDisk(4);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    wal.append(entries(1, 5, 1));
    wal.append(entries(6, 9, 2)); // an uncommitted tail of an old term
    wal.saveHardState(hardState(2, undefined, 5));
    syncNow(disk, wal);
    assert.equal(await_(disk, (done) => wal.installSnapshot(snapshotAt(50, 3), done)), undefined);
    assert.equal(wal.lastIndex(), 50);
    wal.append(entries(51, 52, 3));
    wal.saveHardState(hardState(3, undefined, 51));
    syncNow(disk, wal);
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.equal(reopened.recovered.snapshot?.meta.index, 50);
    assert.deepEqual(describeLog(reopened.recovered.entries), describeLog(entries(51, 52, 3)));
    assert.deepEqual(reopened.recovered.hardState, hardState(3, undefined, 51));
  });

  test('a crash after the installed snapshot is durable but before its record: the snapshot wins', () => {
    const disk = simDisk(5);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    wal.append(entries(1, 9, 1));
    wal.saveHardState(hardState(1, undefined, 3));
    syncNow(disk, wal);
    assert.equal(await_(disk, (done) => wal.installSnapshot(snapshotAt(7, 2), done)), undefined);
    disk.storage.crash(); // the snapshot record was staged, never synced
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.equal(reopened.recovered.snapshot?.meta.index, 7);
    assert.deepEqual(reopened.recovered.entries, [], 'entry 7 has term 1, not 2: log replaced');
    assert.equal(reopened.recovered.hardState.commitIndex, 7, 'raised to the snapshot');
  });

  test('a damaged newest snapshot is skipped for the older one, whose log is still there', () => {
    const disk = simDisk(6);
    const wal = filled(disk, 100);
    await_(disk, (done) => wal.saveSnapshot(snapshotAt(40, 1), done));
    await_(disk, (done) => wal.saveSnapshot(snapshotAt(80, 1), done));
    runUntil(disk.scheduler, () => disk.scheduler.pending === 0);
    const newest = snapshotFileName(logIndex(80), term(1));
    const bytes = disk.storage.read(newest)!;
    disk.storage.truncate(newest, 0);
    disk.storage.append(newest, bytes.map((b, i) => (i === 30 ? b ^ 1 : b)));
    const opened = openWal(disk.storage, SMALL_WAL);
    assert.ok(!('error' in opened), 'error' in opened ? opened.error.message : '');
    assert.equal(opened.wal.recovered.snapshot?.meta.index, 40);
    assert.deepEqual(describeLog(opened.wal.recovered.entries), describeLog(entries(41, 100, 1, 40)));
    assert.deepEqual(opened.repairs.map((r) => `${r.action} ${r.file}`), [`skipped ${newest}`]);
  });

  test('a cut below the first kept segment\'s start (a conflict right after it opened) recovers '
    + 'from the snapshot', () => {
    // Found by `conclave sim --scenario core --seed 194`: a segment opened when the log ended at
    // N (its header says N + 1); the batch in it began by cutting back to N - 1 (a new leader
    // replaced the uncommitted entry N); a snapshot at N (the new entry) removed the segments
    // before; recovery refused the cut below the header's index and the member never restarted.
    for (let last = 10; last <= 80; last++) {
      const disk = simDisk(last);
      const wal = mustOpen(disk.storage, SMALL_WAL);
      for (let i = 1; i <= last; i++) {
        wal.append(entries(i, i, 1, 40));
        wal.saveHardState(hardState(1, 'n1', i - 1));
        syncNow(disk, wal);
      }
      const before = segmentsOf(disk).length;
      wal.append(entries(last, last, 2, 40));
      wal.saveHardState(hardState(2, 'n2', last));
      syncNow(disk, wal);
      if (segmentsOf(disk).length === before) continue;
      // The cut opened a segment: the shape the simulator found.
      const logSegments = (): string[] => segmentsOf(disk).filter((f) => f.endsWith('.log')).sort();
      const cutSegment = logSegments().at(-1);
      assert.equal(await_(disk, (done) => wal.saveSnapshot(snapshotAt(last, 2), done)), undefined);
      runUntil(disk.scheduler, () => disk.scheduler.pending === 0);
      wal.append(entries(last + 1, last + 3, 2, 40));
      wal.saveHardState(hardState(2, 'n2', last + 3));
      syncNow(disk, wal);
      assert.equal(logSegments()[0], cutSegment, 'the segments before the cut went');
      const reopened = mustOpen(disk.storage, SMALL_WAL);
      assert.equal(reopened.recovered.snapshot?.meta.index, last);
      assert.deepEqual(describeLog(reopened.recovered.entries),
        describeLog(entries(last + 1, last + 3, 2, 40)));
      assert.equal(reopened.recovered.hardState.commitIndex, last + 3);
      return;
    }
    assert.fail('no entry count made the cut open a segment');
  });

  test('a log that starts after a snapshot nobody kept refuses to open, naming what is missing', () => {
    const disk = simDisk(7);
    const wal = filled(disk, 100);
    await_(disk, (done) => wal.saveSnapshot(snapshotAt(40, 1), done));
    await_(disk, (done) => wal.saveSnapshot(snapshotAt(80, 1), done));
    runUntil(disk.scheduler, () => disk.scheduler.pending === 0);
    for (const file of snapshotsOf(disk)) disk.storage.remove(file);
    const opened = openWal(disk.storage, SMALL_WAL);
    assert.ok('error' in opened);
    assert.equal(opened.error.kind, 'missing-segment');
    assert.match(opened.error.message, /no snapshot covers the entries before it/);
  });

  test('an installed snapshot whose file is gone refuses to open', () => {
    const disk = simDisk(8);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    wal.append(entries(1, 3, 1));
    syncNow(disk, wal);
    await_(disk, (done) => wal.installSnapshot(snapshotAt(20, 2), done));
    wal.saveHardState(hardState(2, undefined, 20));
    syncNow(disk, wal);
    for (const file of snapshotsOf(disk)) disk.storage.remove(file);
    const opened = openWal(disk.storage, SMALL_WAL);
    assert.ok('error' in opened && opened.error.kind === 'missing-snapshot');
  });
});
