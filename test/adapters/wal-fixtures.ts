/**
 * The WAL fixtures under test/fixtures/wal/, built deterministically: a six-entry log in three
 * synced batches, then damaged in two ways. Run this file to rewrite the checked-in copies:
 *
 *   node --import tsx test/adapters/wal-fixtures.ts --write
 *
 * wal-file.test.ts checks that the checked-in files equal what this builds, so a format change
 * cannot slip by unnoticed (old files must still open; see the README there).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logIndex, nodeId, term } from '../../src/core/ids.js';
import type { Entry } from '../../src/core/raft/types.js';
import { scanSegment } from '../../src/runtime/wal/segment.js';
import { openWal } from '../../src/runtime/wal/wal.js';
import { Prng } from '../../src/sim/prng.js';
import { Scheduler } from '../../src/sim/scheduler.js';
import { SimStorage } from '../../src/sim/sim-storage.js';

export const FIXTURE_SEGMENT = 'wal-0000000001.log';
export const FIXTURE_WAL_CONFIG = Object.freeze({
  segmentBytesMax: 1024 * 1024, recordBytesMax: 64 * 1024, manifestBytesMax: 64 * 1024,
});
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];

export function fixtureEntry(index: number, termValue: number): Entry {
  return { index: logIndex(index), term: term(termValue), kind: 'normal',
    data: new TextEncoder().encode(WORDS[index - 1]) };
}

export interface WalFixtures {
  /** The undamaged log. */
  readonly clean: Uint8Array;
  /** Start of each record in `clean`. Unit: bytes. */
  readonly recordOffsets: readonly number[];
  /** The log with its last record (the third hard state) cut 5 bytes short. */
  readonly tornTail: Uint8Array;
  /** The log with one bit of entry 3's data ("gamma") flipped. */
  readonly corruptMiddle: Uint8Array;
  /** Where the record holding the flipped bit starts. Unit: bytes. */
  readonly corruptRecordOffset: number;
}

/** Builds the clean log with the WAL itself (over the simulator's disk), then damages copies. */
export function buildWalFixtures(): WalFixtures {
  const scheduler = new Scheduler();
  const storage = new SimStorage(scheduler, new Prng(1));
  const opened = openWal(storage, FIXTURE_WAL_CONFIG);
  if ('error' in opened) throw new Error(opened.error.message);
  const { wal } = opened;
  const batches: [Entry[], number, string, number][] = [
    [[fixtureEntry(1, 1), fixtureEntry(2, 1)], 1, 'n1', 1],
    [[fixtureEntry(3, 1), fixtureEntry(4, 1)], 1, 'n1', 3],
    [[fixtureEntry(5, 2), fixtureEntry(6, 2)], 2, 'n2', 5],
  ];
  for (const [batch, termValue, vote, commit] of batches) {
    wal.append(batch);
    wal.saveHardState({ term: term(termValue), vote: nodeId(vote), commitIndex: logIndex(commit) });
    let synced = false;
    wal.sync(() => (synced = true));
    while (!synced && scheduler.step()) { /* virtual time passes */ }
  }
  const clean = storage.read(FIXTURE_SEGMENT)!;
  const scan = scanSegment(FIXTURE_SEGMENT, clean, true, FIXTURE_WAL_CONFIG.recordBytesMax);
  if ('code' in scan) throw new Error(scan.message);
  const recordOffsets = scan.records.map((r) => r.offsetBytes);
  // Records: segment header, carried hard state, then (entries, hard state) per batch.
  const corruptRecordOffset = recordOffsets[4]!;
  const gamma = indexOf(clean, new TextEncoder().encode('gamma'));
  const corruptMiddle = clean.slice();
  corruptMiddle[gamma + 1]! ^= 0x04;
  return { clean, recordOffsets, tornTail: clean.slice(0, clean.length - 5), corruptMiddle,
    corruptRecordOffset };
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  for (let i = 0; i + needle.length <= haystack.length; i++) {
    if (needle.every((b, j) => haystack[i + j] === b)) return i;
  }
  throw new Error('needle not found');
}

export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/wal/', import.meta.url));

if (process.argv.includes('--write') && process.argv[1] === fileURLToPath(import.meta.url)) {
  const fixtures = buildWalFixtures();
  for (const [folder, bytes] of [['torn-tail', fixtures.tornTail],
    ['corrupt-middle', fixtures.corruptMiddle]] as const) {
    const target = join(FIXTURES_DIR, folder, FIXTURE_SEGMENT);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, bytes);
    process.stdout.write(`wrote ${target} (${bytes.length} bytes)\n`);
  }
}
