/**
 * wal: manifest. Goal: a segment that lost synced records (deleted, emptied, zeroed, cut short)
 * refuses to open with CONCLAVE_WAL_RECORDS_LOST naming the file, while a torn tail of records
 * that were never synced is still cut as before; the manifest stays bounded (rewritten when
 * full) and a torn claim in it is repaired. Crashes never make it refuse falsely: that is
 * crash.property.test.ts, which reopens with `requireManifest` after every crash.
 * Method: write logs through the WAL on the simulator's disk, damage copies of the files at
 * every cut point of the synced bytes, and open them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  MANIFEST_CLAIM_BYTES, MANIFEST_FILE, encodeClaim, readManifest,
} from '../../../src/runtime/wal/manifest.js';
import { walHoldsRecords } from '../../../src/runtime/wal/recovery.js';
import { openWal } from '../../../src/runtime/wal/wal.js';
import type { WalError } from '../../../src/runtime/wal/wal-error.js';
import {
  SMALL_WAL, entries, hardState, mustOpen, segmentsOf, simDisk, syncNow, type SimDisk,
} from './wal-harness.js';

type Files = Record<string, Uint8Array>;

/** A synced log of `batches` batches (3 entries each) over several 1 KiB segments. */
function writtenFiles(batches: number): Files {
  const disk = simDisk(5);
  const wal = mustOpen(disk.storage, SMALL_WAL);
  for (let batch = 0; batch < batches; batch++) {
    wal.append(entries(3 * batch + 1, 3 * batch + 3, 1, 60));
    wal.saveHardState(hardState(1, 'n1', 3 * batch + 1));
    syncNow(disk, wal);
  }
  return filesOf(disk);
}

function filesOf(disk: SimDisk): Files {
  return Object.fromEntries(disk.storage.list().map((name) => [name, disk.storage.read(name)!]));
}

function diskWith(files: Files): SimDisk {
  const disk = simDisk(7);
  for (const [name, bytes] of Object.entries(files)) disk.storage.append(name, bytes);
  return disk;
}

function refusal(files: Files): WalError {
  const opened = openWal(diskWith(files).storage, SMALL_WAL, { requireManifest: true });
  assert.ok('error' in opened, 'the damaged log opened');
  return opened.error;
}

function without(files: Files, name: string): Files {
  const copy = { ...files };
  delete copy[name];
  return copy;
}

describe('wal: manifest: lost synced records refuse to open', () => {
  const files = writtenFiles(12);
  const segments = Object.keys(files).filter((name) => name.startsWith('wal-0'));
  const last = segments.at(-1)!;

  test('the log under test spans several segments and opens intact', () => {
    assert.ok(segments.length >= 3, segments.join());
    const opened = openWal(diskWith(files).storage, SMALL_WAL, { requireManifest: true });
    assert.ok('wal' in opened, 'error' in opened ? opened.error.message : '');
    assert.equal(opened.wal.lastIndex(), 36);
  });

  test('a deleted last segment refuses, naming it', () => {
    const error = refusal(without(files, last));
    assert.equal(error.code, 'CONCLAVE_WAL_RECORDS_LOST');
    assert.equal(error.kind, 'records-lost');
    assert.equal(error.file, last);
    assert.match(error.message, new RegExp(`^write-ahead log lost synced records: ${last}: ` +
      'the file is missing'));
    assert.ok(!error.message.includes('\n'), 'one line');
  });

  test('every segment deleted (the manifest kept) refuses', () => {
    let remaining = files;
    for (const name of segments) remaining = without(remaining, name);
    const error = refusal(remaining);
    assert.equal(error.kind, 'records-lost');
    assert.match(error.message, /no segment is left/);
  });

  test('an emptied or zeroed last segment refuses', () => {
    const size = files[last]!.length;
    for (const damaged of [new Uint8Array(0), new Uint8Array(size), new Uint8Array(4096)]) {
      const error = refusal({ ...files, [last]: damaged });
      assert.equal(error.kind, 'records-lost', `${damaged.length} bytes`);
      assert.equal(error.file, last);
      assert.match(error.message, /emptied, zeroed or cut short/);
    }
  });

  test('the last segment cut at any point, or zeroed from any point on, refuses', () => {
    const bytes = files[last]!;
    for (let at = 0; at < bytes.length; at++) {
      const cut = refusal({ ...files, [last]: bytes.slice(0, at) });
      assert.equal(cut.kind, 'records-lost', `cut at ${at}: ${cut.message}`);
      const zeroed = bytes.slice();
      zeroed.fill(0, at);
      assert.equal(refusal({ ...files, [last]: zeroed }).kind, 'records-lost', `zeroed at ${at}`);
    }
  });

  test('an older segment cut at a record boundary refuses too', () => {
    const error = refusal({ ...files, [segments[1]!]: files[segments[1]!]!.slice(0, 100) });
    assert.ok(error.kind === 'records-lost' || error.kind === 'corrupt-record', error.message);
    assert.equal(error.file, segments[1]);
  });

  test('a missing manifest refuses when required; otherwise the log is adopted', () => {
    const error = refusal(without(files, MANIFEST_FILE));
    assert.equal(error.code, 'CONCLAVE_WAL_RECORDS_LOST');
    assert.equal(error.kind, 'missing-manifest');
    assert.equal(error.file, MANIFEST_FILE);
    const disk = diskWith(without(files, MANIFEST_FILE));
    const wal = mustOpen(disk.storage, SMALL_WAL);
    syncNow(disk, wal);
    const claim = readManifest(disk.storage.read(MANIFEST_FILE)).claim;
    assert.deepEqual(claim, { sequence: segments.length, syncedBytes: files[last]!.length });
  });

  test('a manifest of garbage counts as missing', () => {
    const error = refusal({ ...files, [MANIFEST_FILE]: new Uint8Array(48).fill(0xab) });
    assert.equal(error.kind, 'missing-manifest');
    assert.match(error.message, /holds no intact claim \(48 bytes, 2 damaged\)/);
  });
});

describe('wal: manifest: what it does not refuse', () => {
  test('bytes written but never synced are still a torn tail, cut at open', () => {
    const disk = simDisk(8);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    wal.append(entries(1, 3, 1, 60));
    syncNow(disk, wal);
    wal.append(entries(4, 6, 1, 60));
    wal.sync(() => undefined); // Written to the segment; the disk has not finished the sync.
    const files = filesOf(disk);
    const segment = segmentsOf(disk.storage).at(-1)!;
    const torn = { ...files, [segment]: files[segment]!.slice(0, files[segment]!.length - 5) };
    const opened = openWal(diskWith(torn).storage, SMALL_WAL, { requireManifest: true });
    assert.ok('wal' in opened, 'error' in opened ? opened.error.message : '');
    assert.equal(opened.wal.lastIndex(), 3);
    assert.equal(opened.repairs[0]?.action, 'truncated');
  });

  test('a torn claim at the end of the manifest is cut; the newest intact one holds', () => {
    const files = writtenFiles(4);
    const manifest = files[MANIFEST_FILE]!;
    const torn = new Uint8Array([...manifest, ...encodeClaim({ sequence: 9, syncedBytes: 9 })
      .subarray(0, 10)]);
    const disk = diskWith({ ...files, [MANIFEST_FILE]: torn });
    const opened = openWal(disk.storage, SMALL_WAL, { requireManifest: true });
    assert.ok('wal' in opened, 'error' in opened ? opened.error.message : '');
    assert.deepEqual(opened.repairs.map((r) => [r.file, r.action, r.offsetBytes]),
      [[MANIFEST_FILE, 'truncated', manifest.length]]);
    syncNow(disk, opened.wal);
    assert.equal(disk.storage.read(MANIFEST_FILE)!.length % MANIFEST_CLAIM_BYTES, 0);
  });

  test('the manifest is rewritten when full and keeps the newest claim', () => {
    const disk = simDisk(9);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    for (let batch = 0; batch < 120; batch++) {
      wal.append(entries(batch + 1, batch + 1, 1, 20));
      syncNow(disk, wal);
    }
    syncNow(disk, wal); // Lets a rewrite in flight finish.
    const stats = wal.stats();
    assert.ok(stats.manifestRewrites >= 2, JSON.stringify(stats));
    assert.ok(disk.storage.read(MANIFEST_FILE)!.length <= SMALL_WAL.manifestBytesMax);
    const last = segmentsOf(disk.storage).at(-1)!;
    assert.deepEqual(readManifest(disk.storage.read(MANIFEST_FILE)).claim,
      { sequence: segmentsOf(disk.storage).length, syncedBytes: disk.storage.read(last)!.length });
    assert.equal(refusal(without(filesOf(disk), last)).kind, 'records-lost');
  });

  test('walHoldsRecords: not for an empty disk or a fresh manifest; yes once a batch synced',
    () => {
    const disk = simDisk(10);
    assert.equal(walHoldsRecords(disk.storage), false);
    const wal = mustOpen(disk.storage, SMALL_WAL);
    syncNow(disk, wal);
    assert.deepEqual(disk.storage.list(), [MANIFEST_FILE]);
    assert.equal(walHoldsRecords(disk.storage), false);
    wal.append(entries(1, 1, 1));
    syncNow(disk, wal);
    assert.equal(walHoldsRecords(disk.storage), true);
  });

  test('readManifest is total: any bytes give a claim or none, never an exception', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      const read = readManifest(bytes);
      assert.ok(read.claim === undefined || Number.isSafeInteger(read.claim.syncedBytes));
    }), { numRuns: 300 });
  });
});
