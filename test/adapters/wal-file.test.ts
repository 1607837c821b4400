/**
 * wal: on real files. Goal: the WAL over FileStorage round-trips across instances (as across a
 * restart), cuts a torn tail on disk, and refuses a log damaged in the middle with the file and
 * offset; the checked-in fixtures (test/fixtures/wal) behave as their README says and equal what
 * their recipe builds. Method: logs written into temporary directories, damaged by writing
 * bytes directly, opened through a fresh FileStorage; fixtures are copied before opening.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync }
  from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileStorage } from '../../src/adapters/file-storage.js';
import { logIndex, nodeId, term } from '../../src/core/ids.js';
import type { Entry } from '../../src/core/raft/types.js';
import { openWal, type OpenWalResult, type Wal } from '../../src/runtime/wal/wal.js';
import {
  FIXTURES_DIR, FIXTURE_SEGMENT, FIXTURE_WAL_CONFIG, buildWalFixtures, fixtureEntry,
} from './wal-fixtures.js';

const scratch = mkdtempSync(join(tmpdir(), 'conclave-wal-file-'));
let dirs = 0;
const storages: FileStorage[] = [];
after(() => {
  for (const storage of storages) storage.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A fresh directory holding `files` (name → bytes). */
function directoryWith(files: Readonly<Record<string, Uint8Array>> = {}): string {
  const directory = join(scratch, `d${++dirs}`);
  mkdirSync(directory);
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(directory, name), bytes);
  return directory;
}

function open(directory: string, config = FIXTURE_WAL_CONFIG): OpenWalResult {
  const storage = new FileStorage(directory);
  storages.push(storage);
  return openWal(storage, config);
}

function syncWal(wal: Wal): Promise<void> {
  return new Promise((resolve, reject) =>
    wal.sync((error) => (error === undefined ? resolve() : reject(error))));
}

const words = (log: readonly Entry[]): string[] => log.map((e) => new TextDecoder().decode(e.data));
const fixtures = buildWalFixtures();

describe('wal: files', () => {
  test('a log written through FileStorage reopens in a new instance, across segments', async () => {
    const directory = directoryWith();
    const config = { segmentBytesMax: 2048, recordBytesMax: 1024, manifestBytesMax: 240 };
    const first = open(directory, config);
    assert.ok('wal' in first);
    for (let i = 1; i <= 100; i++) {
      first.wal.append([{ index: logIndex(i), term: term(1), kind: 'normal',
        data: new TextEncoder().encode(`entry ${i} `.repeat(5)) }]);
      if (i % 10 === 0) {
        first.wal.saveHardState({ term: term(1), vote: nodeId('n1'), commitIndex: logIndex(i) });
        await syncWal(first.wal);
      }
    }
    const second = open(directory, config);
    assert.ok('wal' in second);
    assert.equal(second.wal.lastIndex(), 100);
    const entry42 = second.wal.recovered.entries[41];
    assert.equal(new TextDecoder().decode(entry42?.data), 'entry 42 '.repeat(5));
    assert.equal(second.wal.recovered.hardState.commitIndex, 100);
    assert.ok(second.wal.stats().batches === 0);
    await syncWal(second.wal);
    assert.ok(new FileStorage(directory).list().length >= 4);
  });

  test('a torn tail written to disk is cut there, and the cut persists', async () => {
    const { clean, recordOffsets } = fixtures;
    const cutAt = recordOffsets.at(-1)! + 3;
    const directory = directoryWith({ [FIXTURE_SEGMENT]: clean.subarray(0, cutAt) });
    const opened = open(directory);
    assert.ok('wal' in opened);
    assert.deepEqual(opened.repairs.map((r) => [r.action, r.offsetBytes]),
      [['truncated', recordOffsets.at(-1)]]);
    await syncWal(opened.wal);
    assert.equal(statSync(join(directory, FIXTURE_SEGMENT)).size, recordOffsets.at(-1));
    const again = open(directory);
    assert.ok('wal' in again);
    assert.deepEqual(again.repairs, []);
  });

  test('a flipped bit in the middle refuses, naming the file and the record offset', () => {
    const directory = directoryWith({ [FIXTURE_SEGMENT]: fixtures.corruptMiddle });
    const opened = open(directory);
    assert.ok('error' in opened);
    assert.equal(opened.error.kind, 'corrupt-record');
    assert.equal(opened.error.offsetBytes, fixtures.corruptRecordOffset);
    assert.match(opened.error.message, new RegExp(
      `${FIXTURE_SEGMENT} at byte ${fixtures.corruptRecordOffset}: checksum mismatch`));
    // Refusing changes nothing on disk.
    assert.deepEqual(new Uint8Array(readFileSync(join(directory, FIXTURE_SEGMENT))),
      fixtures.corruptMiddle);
  });
});

describe('wal: files: checked-in fixtures', () => {
  const copyOf = (folder: string): string => {
    const directory = directoryWith();
    copyFileSync(join(FIXTURES_DIR, folder, FIXTURE_SEGMENT), join(directory, FIXTURE_SEGMENT));
    return directory;
  };

  test('the fixtures equal what their recipe builds, and the README offsets hold', () => {
    const read = (folder: string): Uint8Array =>
      new Uint8Array(readFileSync(join(FIXTURES_DIR, folder, FIXTURE_SEGMENT)));
    assert.deepEqual(read('torn-tail'), fixtures.tornTail);
    assert.deepEqual(read('corrupt-middle'), fixtures.corruptMiddle);
    assert.deepEqual(fixtures.recordOffsets, [0, 27, 55, 111, 141, 198, 228, 286]);
    assert.equal(fixtures.clean.length, 316);
  });

  test('torn-tail/ opens with six entries and the second hard state, cut to 286 bytes',
    async () => {
    const directory = copyOf('torn-tail');
    const opened = open(directory);
    assert.ok('wal' in opened, 'error' in opened ? opened.error.message : '');
    assert.deepEqual(words(opened.wal.recovered.entries),
      ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta']);
    assert.deepEqual(opened.wal.recovered.entries.map((e) => e.term), [1, 1, 1, 1, 2, 2]);
    assert.deepEqual(opened.wal.recovered.entries[4], fixtureEntry(5, 2));
    assert.deepEqual(opened.wal.recovered.hardState,
      { term: term(1), vote: nodeId('n1'), commitIndex: logIndex(3) });
    assert.equal(statSync(join(directory, FIXTURE_SEGMENT)).size, 286);
    await syncWal(opened.wal); // The recovery sync (and the manifest it creates) before closing.
  });

  test('corrupt-middle/ refuses at byte 141 with a checksum mismatch', () => {
    const opened = open(copyOf('corrupt-middle'));
    assert.ok('error' in opened);
    assert.equal(opened.error.file, FIXTURE_SEGMENT);
    assert.equal(opened.error.offsetBytes, 141);
    assert.match(opened.error.message, new RegExp('wal-0000000001\\.log at byte 141: checksum ' +
      'mismatch .*followed by an intact record at byte 198'));
  });
});
