/**
 * wal: recovery. Goal: a torn tail (cut anywhere, zero-filled, or a last record with a bad
 * checksum) is cut off and the log opens with every earlier record; any damage before the tail,
 * in an older segment, a missing segment or a foreign format refuses to open, naming the file and
 * the byte offset. Method: write a log through the WAL, then damage copies of its files
 * exhaustively (every cut point, every byte of every record) and open them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32c } from '../../../src/core/checksum.js';
import { logIndex } from '../../../src/core/ids.js';
import { WAL_DEFAULTS } from '../../../src/runtime/wal/config.js';
import {
  encodeEntries, encodeHardState, encodeSegmentHeader, RECORD_FRAME_BYTES,
} from '../../../src/runtime/wal/record.js';
import { scanSegment } from '../../../src/runtime/wal/segment.js';
import { openWal } from '../../../src/runtime/wal/wal.js';
import type { WalError } from '../../../src/runtime/wal/wal-error.js';
import {
  SMALL_WAL, describeLog, entries, entry, hardState, mustOpen, segmentsOf, simDisk, syncNow,
  type SimDisk,
} from './wal-harness.js';

const SEGMENT_1 = 'wal-0000000001.log';
const SEGMENT_2 = 'wal-0000000002.log';

/** A disk holding exactly `files`. */
function diskWith(files: Readonly<Record<string, Uint8Array>>): SimDisk {
  const disk = simDisk(99);
  for (const [name, bytes] of Object.entries(files)) disk.storage.append(name, bytes);
  return disk;
}

/** Files of a log written in three synced batches: entries 1..9, hard states, term 1 then 2. */
function writtenLog(config = WAL_DEFAULTS): Record<string, Uint8Array> {
  const disk = simDisk(1);
  const wal = mustOpen(disk.storage, config);
  wal.append(entries(1, 3, 1, 20));
  wal.saveHardState(hardState(1, 'n1', 2));
  syncNow(disk, wal);
  wal.append(entries(4, 6, 2, 20));
  wal.saveHardState(hardState(2, 'n2', 5));
  syncNow(disk, wal);
  wal.append(entries(7, 9, 2, 20));
  syncNow(disk, wal);
  const files: Record<string, Uint8Array> = {};
  for (const name of disk.storage.list()) files[name] = disk.storage.read(name)!;
  return files;
}

/** Start offsets of the intact records of `bytes`. */
function recordOffsets(name: string, bytes: Uint8Array): number[] {
  const scan = scanSegment(name, bytes, true, WAL_DEFAULTS.recordBytesMax);
  assert.ok(!('code' in scan));
  return scan.records.map((r) => r.offsetBytes);
}

function mustRefuse(files: Record<string, Uint8Array>, config = WAL_DEFAULTS): WalError {
  const opened = openWal(diskWith(files).storage, config);
  assert.ok('error' in opened, 'the damaged log opened');
  return opened.error;
}

function frame(type: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(RECORD_FRAME_BYTES + 1 + payload.length);
  const view = new DataView(out.buffer);
  out[RECORD_FRAME_BYTES] = type;
  out.set(payload, RECORD_FRAME_BYTES + 1);
  view.setUint32(0, 1 + payload.length, true);
  view.setUint32(4, crc32c(out, RECORD_FRAME_BYTES), true);
  return out;
}

const concat = (...parts: Uint8Array[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => [...p]));

describe('wal: recovery: torn tail', () => {
  test('a log cut at any byte after its first batch opens to a record prefix, cut there', () => {
    const full = writtenLog()[SEGMENT_1]!;
    const offsets = [...recordOffsets(SEGMENT_1, full), full.length];
    const firstBatchEnd = offsets[3]!; // header, carried hard state, entries, hard state
    for (let cut = firstBatchEnd; cut <= full.length; cut++) {
      const disk = diskWith({ [SEGMENT_1]: full.slice(0, cut) });
      const opened = openWal(disk.storage, WAL_DEFAULTS);
      assert.ok('wal' in opened, `cut ${cut}`);
      const boundary = offsets.filter((o) => o <= cut).at(-1)!;
      assert.equal(disk.storage.read(SEGMENT_1)!.length, boundary, `cut ${cut}`);
      assert.equal(opened.repairs.length, boundary === cut ? 0 : 1);
      const log = opened.wal.recovered.entries;
      assert.ok(log.length >= 3, `cut ${cut}: lost synced entries`);
      assert.deepEqual(describeLog(log), describeLog(entries(1, 9, 1, 20)
        .map((e) => (e.index <= 3 ? e : entry(e.index, 2, 20))).slice(0, log.length)));
    }
  });

  test('a torn tail is cut once: reopening finds nothing more to repair', () => {
    const full = writtenLog()[SEGMENT_1]!;
    const disk = diskWith({ [SEGMENT_1]: full.slice(0, full.length - 5) });
    const first = openWal(disk.storage, WAL_DEFAULTS);
    assert.ok('wal' in first && first.repairs.length === 1);
    assert.equal(first.repairs[0]?.action, 'truncated');
    const second = openWal(disk.storage, WAL_DEFAULTS);
    assert.ok('wal' in second);
    assert.deepEqual(second.repairs, []);
    assert.equal(second.wal.lastIndex(), 6);
  });

  test('zeros after the last record (a file grown but not written) are a torn tail', () => {
    const full = writtenLog()[SEGMENT_1]!;
    for (const zeros of [1, 8, 9, 100, 4096]) {
      const opened = openWal(diskWith({ [SEGMENT_1]: concat(full, new Uint8Array(zeros)) }).storage,
        WAL_DEFAULTS);
      assert.ok('wal' in opened, `${zeros} zeros`);
      assert.equal(opened.wal.lastIndex(), 9);
      assert.equal(opened.repairs[0]?.offsetBytes, full.length);
    }
  });

  test('a last record with a bad checksum and nothing after it is cut off', () => {
    const full = writtenLog()[SEGMENT_1]!.slice();
    const last = recordOffsets(SEGMENT_1, full).at(-1)!;
    full[full.length - 1]! ^= 0x01;
    const opened = openWal(diskWith({ [SEGMENT_1]: full }).storage, WAL_DEFAULTS);
    assert.ok('wal' in opened);
    assert.equal(opened.wal.lastIndex(), 6);
    assert.equal(opened.repairs[0]?.offsetBytes, last);
    assert.match(opened.repairs[0]?.reason ?? '', /checksum mismatch/);
  });

  test('an impossible length at the tail is torn; the same before intact data refuses', () => {
    const full = writtenLog()[SEGMENT_1]!;
    const huge = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6);
    const opened = openWal(diskWith({ [SEGMENT_1]: concat(full, huge) }).storage, WAL_DEFAULTS);
    assert.ok('wal' in opened);
    assert.equal(opened.wal.lastIndex(), 9);
    const offsets = recordOffsets(SEGMENT_1, full);
    const middle = concat(full.slice(0, offsets[3]), huge, full.slice(offsets[3]));
    const error = mustRefuse({ [SEGMENT_1]: middle });
    assert.equal(error.offsetBytes, offsets[3]);
    assert.match(error.message, /impossible record length 4294967295/);
  });

  test('a last segment whose header is torn is removed, and writing starts it again', () => {
    const files = writtenLog(SMALL_WAL);
    const segment2 = encodeSegmentHeader(2, logIndex(10)).subarray(0, 12);
    const disk = diskWith({ ...files, [SEGMENT_2]: segment2 });
    const opened = openWal(disk.storage, SMALL_WAL);
    assert.ok('wal' in opened);
    assert.deepEqual(opened.repairs.map((r) => [r.file, r.action]), [[SEGMENT_2, 'removed']]);
    assert.deepEqual(segmentsOf(disk.storage), [SEGMENT_1]);
    for (let i = 10; segmentsOf(disk.storage).length < 2; i++) {
      opened.wal.append(entries(i, i, 2, 200));
      syncNow(disk, opened.wal);
    }
    assert.ok(mustOpen(disk.storage, SMALL_WAL).lastIndex() > 10);
  });
});

describe('wal: recovery: corruption refuses to open', () => {
  test('any damaged byte before the last record refuses, naming the file and record offset', () => {
    const full = writtenLog()[SEGMENT_1]!;
    const offsets = recordOffsets(SEGMENT_1, full);
    const lastStart = offsets.at(-1)!;
    for (let at = 0; at < lastStart; at++) {
      const damaged = full.slice();
      damaged[at]! ^= 1 << (at % 8);
      const error = mustRefuse({ [SEGMENT_1]: damaged });
      const recordStart = offsets.filter((o) => o <= at).at(-1)!;
      assert.equal(error.kind, 'corrupt-record', `byte ${at}: ${error.message}`);
      assert.equal(error.file, SEGMENT_1);
      assert.equal(error.offsetBytes, recordStart, `byte ${at}`);
      assert.ok(error.message.includes(`${SEGMENT_1} at byte ${recordStart}`), error.message);
    }
  });

  test('any damaged byte in a segment that is not the last refuses', () => {
    const files = writtenLog(SMALL_WAL);
    const bigger = (() => {
      const d = diskWith(files);
      const w = mustOpen(d.storage, SMALL_WAL);
      for (let i = 10; segmentsOf(d.storage).length < 2; i++) {
        w.append(entries(i, i, 2, 200));
        syncNow(d, w);
      }
      return Object.fromEntries(d.storage.list().map((n) => [n, d.storage.read(n)!]));
    })();
    const first = bigger[SEGMENT_1]!;
    for (let at = 0; at < first.length; at += 7) {
      const damaged = first.slice();
      damaged[at]! ^= 0x80;
      const error = mustRefuse({ ...bigger, [SEGMENT_1]: damaged }, SMALL_WAL);
      assert.equal(error.file, SEGMENT_1, `byte ${at}`);
      assert.equal(error.kind, 'corrupt-record');
    }
    const cut = mustRefuse({ ...bigger, [SEGMENT_1]: first.slice(0, first.length - 3) }, SMALL_WAL);
    assert.match(cut.message, /not the last one/);
  });

  test('a record with a valid checksum but an unknown type refuses, even at the tail', () => {
    const full = writtenLog()[SEGMENT_1]!;
    const error = mustRefuse({ [SEGMENT_1]: concat(full, frame(9, Uint8Array.of(1, 2, 3))) });
    assert.equal(error.offsetBytes, full.length);
    assert.match(error.message, /unknown record type 9/);
  });

  test('a missing segment refuses, naming it', () => {
    const header = (sequence: number, first: number): Uint8Array =>
      encodeSegmentHeader(sequence, logIndex(first));
    const gap = mustRefuse({
      [SEGMENT_1]: header(1, 1), 'wal-0000000003.log': header(3, 1),
    });
    assert.equal(gap.kind, 'missing-segment');
    assert.match(gap.message, /segment wal-0000000002\.log is missing/);
    const late = mustRefuse({ [SEGMENT_2]: concat(header(2, 5), encodeEntries(entries(5, 6, 1))) });
    assert.equal(late.kind, 'missing-segment');
    assert.match(late.message, /starts at index 5/);
  });

  test('a segment in a newer format version refuses with unsupported-format', () => {
    const payload = new Uint8Array(18);
    const view = new DataView(payload.buffer);
    view.setUint32(0, 0x4c415743, true);
    view.setUint16(4, 2, true);
    view.setUint32(6, 1, true);
    view.setUint32(10, 1, true);
    const error = mustRefuse({ [SEGMENT_1]: frame(1, payload) });
    assert.equal(error.kind, 'unsupported-format');
    assert.match(error.message, /version 2; this build reads 0x4c415743 version 1/);
  });

  test('intact records that skip an index, or commit past the log, refuse as inconsistent', () => {
    const start = encodeSegmentHeader(1, logIndex(1));
    const skip = mustRefuse({ [SEGMENT_1]: concat(start, encodeEntries(entries(1, 2, 1)),
      encodeEntries(entries(4, 4, 1))) });
    assert.equal(skip.kind, 'inconsistent-log');
    assert.match(skip.message, /entries start at index 4 but the log ends at 2/);
    const commit = mustRefuse({ [SEGMENT_1]: concat(start, encodeEntries(entries(1, 2, 1)),
      encodeHardState(hardState(1, undefined, 3))) });
    assert.match(commit.message, /commits index 3 but the log ends at 2/);
  });

  test('a refusal leaves the files as they were, even with a torn tail to cut', () => {
    const bytes = concat(encodeSegmentHeader(1, logIndex(1)), encodeEntries(entries(1, 2, 1)),
      encodeHardState(hardState(1, undefined, 3)), Uint8Array.of(40, 0, 0));
    const disk = diskWith({ [SEGMENT_1]: bytes });
    assert.ok('error' in openWal(disk.storage, WAL_DEFAULTS));
    assert.deepEqual(disk.storage.read(SEGMENT_1), bytes);
  });

  test('files that are not segments are ignored', () => {
    const files = writtenLog();
    const others = { 'snapshot-1.bin': Uint8Array.of(1), 'wal-1.log': Uint8Array.of(2) };
    const disk = diskWith({ ...files, ...others });
    assert.equal(mustOpen(disk.storage, WAL_DEFAULTS).lastIndex(), 9);
  });
});

describe('wal: recovery: durability of what was read', () => {
  test('unsynced records that survived a crash are made durable by the first sync', () => {
    let seen = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const disk = simDisk(seed);
      const wal = mustOpen(disk.storage, WAL_DEFAULTS);
      wal.append(entries(1, 2, 1));
      syncNow(disk, wal);
      for (let i = 3; i <= 8; i++) wal.append(entries(i, i, 1)); // one record each
      wal.sync(() => assert.fail('a sync completed across a crash'));
      disk.storage.crash();
      const reopened = mustOpen(disk.storage, WAL_DEFAULTS);
      const recovered = reopened.lastIndex();
      assert.ok(recovered >= 2);
      if (recovered > 2) seen++;
      syncNow(disk, reopened);
      disk.storage.crash();
      assert.equal(mustOpen(disk.storage, WAL_DEFAULTS).lastIndex(), recovered, `seed ${seed}`);
    }
    assert.ok(seen > 0, 'no seed kept unsynced records');
  });
});
