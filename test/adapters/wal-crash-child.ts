/**
 * The process the kill -9 test (wal-kill9.test.ts) kills: opens the file WAL in a directory,
 * checks every recovered entry, then appends batches as fast as the disk allows and reports each
 * completed sync. Not a test file itself.
 *
 * Usage: node --import tsx test/adapters/wal-crash-child.ts DIR LIFE (the test runs a plain-JS
 * build of it, made by compile-for-node.ts, because tsx's start-up costs more than a cycle).
 * LIFE (1, 2, ...) is this run's number: the term of the entries it writes.
 * Lines on stdout:
 *   recovered LAST_INDEX HARD_STATE_TERM COMMIT_INDEX   after recovery, before its sync
 *   synced INDEX                                        every entry up to INDEX is durable
 *   bad DETAIL / refused MESSAGE / failed MESSAGE       then exit with a non-zero code
 */
import { FileStorage } from '../../src/adapters/file-storage.js';
import { logIndex, nodeId, term } from '../../src/core/ids.js';
import type { Entry } from '../../src/core/raft/types.js';
import { WAL_DEFAULTS } from '../../src/runtime/wal/config.js';
import { openWal, type Wal } from '../../src/runtime/wal/wal.js';

export const CHILD_WAL_CONFIG = Object.freeze({
  ...WAL_DEFAULTS, segmentBytesMax: 64 * 1024, recordBytesMax: 64 * 1024,
});
/** Sync calls outstanding at once: enough to exercise group commit, bounded so memory is too. */
const SYNCS_OUTSTANDING_MAX = 3;

/** The data entry `index` written in term `termValue` must hold. */
export function payloadFor(index: number, termValue: number): Uint8Array {
  const head = new TextEncoder().encode(`${index}:${termValue}:`);
  const out = new Uint8Array(head.length + ((index * 37) % 64));
  out.set(head);
  for (let i = head.length; i < out.length; i++) out[i] = (index * 31 + termValue * 7 + i) & 0xff;
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/** A description of the first entry that is not as written, or undefined when all are. */
export function firstBadEntry(log: readonly Entry[]): string | undefined {
  let previousTerm = 0;
  for (const [i, entry] of log.entries()) {
    if (entry.index !== i + 1) return `entry ${i} has index ${entry.index}`;
    if (entry.term < previousTerm) return `entry ${entry.index}: term ${entry.term} fell`;
    if (!sameBytes(entry.data, payloadFor(entry.index, entry.term))) {
      return `entry ${entry.index}: data differs from what was written`;
    }
    previousTerm = entry.term;
  }
  return undefined;
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function run(directory: string, life: number): void {
  const opened = openWal(new FileStorage(directory), CHILD_WAL_CONFIG);
  if ('error' in opened) {
    say(`refused ${opened.error.message}`);
    process.exit(3);
  }
  const { wal } = opened;
  const { entries, hardState } = wal.recovered;
  const bad = firstBadEntry(entries);
  if (bad !== undefined) {
    say(`bad ${bad}`);
    process.exit(4);
  }
  say(`recovered ${entries.length} ${hardState.term} ${hardState.commitIndex}`);
  produce(wal, life);
}

/** Keeps up to SYNCS_OUTSTANDING_MAX syncs outstanding, each after a batch of 1–20 entries. */
function produce(wal: Wal, life: number): void {
  let outstanding = 0;
  let syncedIndex: number = wal.lastIndex();
  let counter = life * 7919;
  const stageAndSync = (): void => {
    counter = (counter * 1103515245 + 12345) % 2147483648;
    const count = 1 + (counter % 20);
    const batch: Entry[] = [];
    for (let i = 1; i <= count; i++) {
      const index = wal.lastIndex() + i;
      batch.push({ index: logIndex(index), term: term(life), kind: 'normal',
        data: payloadFor(index, life) });
    }
    wal.append(batch);
    const commitIndex = logIndex(syncedIndex);
    wal.saveHardState({ term: term(life), vote: nodeId('n1'), commitIndex });
    const upTo = wal.lastIndex();
    outstanding++;
    wal.sync((error) => {
      outstanding--;
      if (error !== undefined) {
        say(`failed ${error.message}`);
        process.exit(5);
      }
      syncedIndex = Math.max(syncedIndex, upTo);
      say(`synced ${upTo}`);
      fill();
    });
  };
  const fill = (): void => {
    while (outstanding < SYNCS_OUTSTANDING_MAX) stageAndSync();
  };
  fill();
}

const [directory, lifeText] = process.argv.slice(2);
if (directory !== undefined && lifeText !== undefined) run(directory, Number(lifeText));
