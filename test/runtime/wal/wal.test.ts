/**
 * wal: writing and reopening. Goal: what is staged and synced comes back after reopening, suffix
 * replacement and segment rolls are recorded, group commit issues one storage sync per batch,
 * storage failures reach every waiting sync, and Raft rules are enforced on what is stored.
 * Method: the WAL over SimStorage, virtual time stepped until callbacks fire; reopening the same
 * storage stands in for a clean restart (crashes are in crash.property.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AssertionError } from '../../../src/core/assert.js';
import type { Storage } from '../../../src/ports/storage.js';
import { WAL_DEFAULTS, entryDataBytesMax } from '../../../src/runtime/wal/config.js';
import { scanSegment } from '../../../src/runtime/wal/segment.js';
import {
  SMALL_WAL, describeLog, entries, entry, hardState, mustOpen, runUntil, segmentsOf, simDisk,
  syncNow,
} from './wal-harness.js';

describe('wal: round trip', () => {
  test('an empty storage opens to an empty log at term 0 without a vote', () => {
    const disk = simDisk(1);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    assert.deepEqual(wal.recovered, { hardState: hardState(0, undefined, 0), entries: [] });
    assert.equal(wal.lastIndex(), 0);
    assert.equal(syncNow(disk, wal), undefined);
  });

  test('synced entries of every kind and the hard state come back after reopening', () => {
    const disk = simDisk(2);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    const log = [
      entry(1, 1, 0, 'noop'), entry(2, 1, 100), entry(3, 2, 7, 'config'), entry(4, 2, 0),
    ];
    wal.append(log.slice(0, 2));
    wal.saveHardState(hardState(1, 'n1', 1));
    wal.append(log.slice(2));
    wal.saveHardState(hardState(2, 'nœud-2', 3));
    assert.equal(wal.lastIndex(), 4);
    assert.equal(syncNow(disk, wal), undefined);
    const reopened = mustOpen(disk.storage, WAL_DEFAULTS);
    assert.deepEqual(describeLog(reopened.recovered.entries), describeLog(log));
    assert.deepEqual(reopened.recovered.hardState, hardState(2, 'nœud-2', 3));
    assert.equal(reopened.lastIndex(), 4);
  });

  test('appends after a reopen continue the log in the same segment', () => {
    const disk = simDisk(3);
    const first = mustOpen(disk.storage, WAL_DEFAULTS);
    first.append(entries(1, 3, 1));
    syncNow(disk, first);
    const second = mustOpen(disk.storage, WAL_DEFAULTS);
    second.append(entries(4, 6, 1));
    syncNow(disk, second);
    const third = mustOpen(disk.storage, WAL_DEFAULTS);
    assert.deepEqual(describeLog(third.recovered.entries), describeLog(entries(1, 6, 1)));
    assert.deepEqual(segmentsOf(disk.storage), ['wal-0000000001.log']);
  });

  test('entries larger together than recordBytesMax are split over several records', () => {
    const disk = simDisk(4);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    const big = entries(1, 12, 1, 300);
    wal.append(big);
    syncNow(disk, wal);
    assert.ok(wal.stats().recordsWritten >= 6, `records: ${wal.stats().recordsWritten}`);
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.deepEqual(describeLog(reopened.recovered.entries), describeLog(big));
  });

  test('an entry as large as entryDataBytesMax fits; one byte more fails an assertion', () => {
    const disk = simDisk(5);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    const max = entryDataBytesMax(SMALL_WAL);
    wal.append([entry(1, 1, max)]);
    assert.throws(() => wal.append([entry(2, 1, 1), entry(3, 1, max + 1)]), AssertionError);
    assert.equal(wal.lastIndex(), 1, 'a refused append stages nothing');
    syncNow(disk, wal);
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.equal(reopened.recovered.entries.length, 1);
    assert.equal(reopened.recovered.entries[0]?.data.length, max);
  });
});

describe('wal: suffix replacement (Raft §5.3)', () => {
  test('appending from a stored index replaces the suffix, before and after reopening', () => {
    const disk = simDisk(6);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    wal.append(entries(1, 5, 1));
    wal.saveHardState(hardState(2, undefined, 2));
    syncNow(disk, wal);
    wal.append(entries(3, 4, 2));
    assert.equal(wal.lastIndex(), 4);
    syncNow(disk, wal);
    const expected = [...entries(1, 2, 1), ...entries(3, 4, 2)];
    assert.deepEqual(describeLog(mustOpen(disk.storage, WAL_DEFAULTS).recovered.entries),
      describeLog(expected));
  });

  test('a replacement and its entries in one batch with more appends after them', () => {
    const disk = simDisk(7);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    wal.append(entries(1, 4, 1));
    wal.append(entries(2, 3, 2));
    wal.append(entries(4, 6, 2));
    wal.append(entries(6, 6, 3));
    syncNow(disk, wal);
    const expected = [entry(1, 1), ...entries(2, 5, 2), entry(6, 3)];
    assert.deepEqual(describeLog(mustOpen(disk.storage, WAL_DEFAULTS).recovered.entries),
      describeLog(expected));
  });

  test('replacing a committed entry fails an assertion (Raft §5.4)', () => {
    const disk = simDisk(8);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    wal.append(entries(1, 3, 1));
    wal.saveHardState(hardState(1, undefined, 2));
    assert.throws(() => wal.append(entries(2, 2, 2)), /cut committed index 2/);
    wal.append(entries(3, 3, 2));
  });
});

describe('wal: Raft rules on what is stored', () => {
  test('a gap, a non-consecutive batch or a falling term fails an assertion', () => {
    const wal = mustOpen(simDisk(9).storage, WAL_DEFAULTS);
    assert.throws(() => wal.append(entries(2, 3, 1)), /no gaps/);
    assert.throws(() => wal.append([entry(1, 1), entry(3, 1)]), /consecutive/);
    assert.throws(() => wal.append([entry(1, 2), entry(2, 1)]), /below/);
    assert.equal(wal.lastIndex(), 0);
  });

  test('a term that falls, a second vote in a term, or a commit past the log fail', () => {
    const wal = mustOpen(simDisk(10).storage, WAL_DEFAULTS);
    wal.append(entries(1, 2, 3));
    wal.saveHardState(hardState(3, 'n1', 1));
    assert.throws(() => wal.saveHardState(hardState(2, undefined, 1)), /below the stored term/);
    assert.throws(() => wal.saveHardState(hardState(3, 'n2', 1)), /vote changed/);
    assert.throws(() => wal.saveHardState(hardState(3, 'n1', 3)), /beyond the last index/);
    wal.saveHardState(hardState(4, 'n2', 2));
  });
});

describe('wal: segments', () => {
  test('a segment past segmentBytesMax rolls to the next; recovery reads them all', () => {
    const disk = simDisk(11);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    let index = 1;
    for (let batch = 0; batch < 30; batch++) {
      wal.append(entries(index, index + 2, 1, 40));
      wal.saveHardState(hardState(1, 'n1', index));
      index += 3;
      syncNow(disk, wal);
    }
    const names = segmentsOf(disk.storage);
    assert.ok(names.length >= 4, names.join());
    names.forEach((name, i) => assert.equal(name, `wal-${String(i + 1).padStart(10, '0')}.log`));
    for (const name of names.slice(0, -1)) {
      const size = disk.storage.read(name)?.length ?? 0;
      assert.ok(size >= SMALL_WAL.segmentBytesMax, `${name} closed at ${size} bytes`);
    }
    assert.equal(wal.stats().segmentsCreated, names.length);
    const reopened = mustOpen(disk.storage, SMALL_WAL);
    assert.deepEqual(describeLog(reopened.recovered.entries), describeLog(entries(1, 90, 1, 40)));
    assert.deepEqual(reopened.recovered.hardState, hardState(1, 'n1', 88));
  });

  test('the hard state is repeated at the start of each segment', () => {
    const disk = simDisk(12);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    wal.append(entries(1, 1, 5));
    wal.saveHardState(hardState(5, 'n3', 1));
    syncNow(disk, wal);
    for (let i = 2; segmentsOf(disk.storage).length < 3; i++) {
      wal.append(entries(i, i, 5, 200));
      syncNow(disk, wal);
    }
    // The first segment opened before any hard state; the later ones carry n3's vote.
    for (const name of segmentsOf(disk.storage).slice(1)) {
      const scan = scanSegment(name, disk.storage.read(name)!, false, SMALL_WAL.recordBytesMax);
      assert.ok(!('code' in scan), name);
      assert.deepEqual(scan.records.slice(0, 2).map((r) => r.record.type),
        ['segment-header', 'hard-state'], name);
      const second = scan.records[1]?.record;
      assert.ok(second?.type === 'hard-state');
      assert.deepEqual(second.hardState, hardState(5, 'n3', 1), name);
    }
  });
});

describe('wal: group commit', () => {
  test('a batch costs one storage sync; a new segment adds one directory sync', () => {
    const disk = simDisk(14);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    syncNow(disk, wal);
    const before = wal.stats();
    wal.append(entries(1, 50, 1));
    wal.saveHardState(hardState(1, 'n1', 10));
    syncNow(disk, wal);
    const first = wal.stats();
    assert.equal(first.syncs - before.syncs, 2, 'file sync and directory sync');
    wal.append(entries(51, 100, 1));
    syncNow(disk, wal);
    assert.equal(wal.stats().syncs - first.syncs, 1);
  });

  test('syncs called while one is in flight share one next batch', () => {
    const disk = simDisk(15);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    syncNow(disk, wal);
    const before = wal.stats();
    const order: number[] = [];
    wal.append(entries(1, 1, 1));
    wal.sync(() => order.push(1));
    for (let i = 2; i <= 20; i++) {
      wal.append(entries(i, i, 1));
      wal.sync(() => order.push(i));
    }
    runUntil(disk.scheduler, () => order.length === 20);
    assert.deepEqual(order, Array.from({ length: 20 }, (_, i) => i + 1));
    assert.equal(wal.stats().batches - before.batches, 2);
    assert.equal(mustOpen(disk.storage, WAL_DEFAULTS).recovered.entries.length, 20);
  });

  test('a sync with nothing new staged joins the batch in flight', () => {
    const disk = simDisk(16);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    syncNow(disk, wal);
    const before = wal.stats();
    let calls = 0;
    wal.append(entries(1, 1, 1));
    wal.sync(() => calls++);
    wal.sync(() => calls++);
    runUntil(disk.scheduler, () => calls === 2);
    assert.equal(wal.stats().batches - before.batches, 1);
  });

  test('the first sync after open waits for the recovery sync', () => {
    const disk = simDisk(17);
    const wal = mustOpen(disk.storage, WAL_DEFAULTS);
    let called = false;
    wal.sync(() => (called = true));
    assert.equal(wal.stats().batches, 0);
    runUntil(disk.scheduler, () => called);
    assert.equal(wal.stats().batches, 1, 'the recovery sync alone covers a sync with nothing new');
  });
});

describe('wal: storage failures', () => {
  /** A SimStorage whose syncs fail once `failing` is set, or whose appends throw. */
  function faulty(seed: number): { disk: ReturnType<typeof simDisk>; storage: Storage;
    set: (mode: 'ok' | 'sync-fails' | 'append-throws') => void } {
    const disk = simDisk(seed);
    let mode: 'ok' | 'sync-fails' | 'append-throws' = 'ok';
    const storage: Storage = {
      list: () => disk.storage.list(),
      read: (name) => disk.storage.read(name),
      append: (name, bytes) => {
        if (mode === 'append-throws') throw new Error('ENOSPC: no space left on device');
        disk.storage.append(name, bytes);
      },
      truncate: (name, size) => disk.storage.truncate(name, size),
      remove: (name) => disk.storage.remove(name),
      rename: (from, to) => disk.storage.rename(from, to),
      sync: (name, done) => disk.storage.sync(name, (error) =>
        done(mode === 'sync-fails' ? new Error('EIO: fdatasync failed') : error)),
      syncDir: (done) => disk.storage.syncDir(done),
    };
    return { disk, storage, set: (next) => (mode = next) };
  }

  test('a failed storage sync fails that sync, the ones queued and every later one', () => {
    const { disk, storage, set } = faulty(18);
    const wal = mustOpen(storage, WAL_DEFAULTS);
    syncNow(disk, wal);
    set('sync-fails');
    const errors: (Error | undefined)[] = [];
    wal.append(entries(1, 1, 1));
    wal.sync((error) => errors.push(error));
    wal.append(entries(2, 2, 1));
    wal.sync((error) => errors.push(error));
    runUntil(disk.scheduler, () => errors.length === 2);
    set('ok');
    errors.push(syncNow(disk, wal));
    assert.deepEqual(errors.map((e) => e?.message), Array(3).fill('EIO: fdatasync failed'));
  });

  test('an append that throws is reported to the sync, never thrown from it', () => {
    const { disk, storage, set } = faulty(19);
    const wal = mustOpen(storage, WAL_DEFAULTS);
    wal.append(entries(1, 1, 1));
    set('append-throws');
    let error: Error | undefined;
    let fired = false;
    wal.sync((e) => {
      fired = true;
      error = e;
    });
    runUntil(disk.scheduler, () => fired);
    assert.match(error?.message ?? '', /ENOSPC/);
  });
});
