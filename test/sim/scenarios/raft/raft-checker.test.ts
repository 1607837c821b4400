/**
 * sim: scenarios: raft: checker — log matching, state-machine safety and leader completeness
 * compare entries by their bytes. Method: two commands with the same length and the same 32-bit
 * FNV-1a hash (found by a birthday search; the checker once compared exactly that pair of
 * figures) must still be told apart.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term, type LogIndex } from '../../../../src/core/ids.js';
import type { Entry } from '../../../../src/core/raft/types.js';
import { RaftChecker } from '../../../../src/sim/scenarios/raft/raft-checker.js';
import type { Violation } from '../../../../src/sim/scenario.js';

const encoder = new TextEncoder();
/** Same length, same FNV-1a-32 (0x2d449f1a), different bytes. */
const A = encoder.encode('put k0 v001pwu');
const B = encoder.encode('put k0 v00c5fa');

function fnv1a(data: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const byte of data) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash >>> 0;
}

/** The first violation (read through a function: deepEqual([]) narrows the array to never[]). */
const first = (checker: RaftChecker): Violation | undefined => checker.violations[0];

const entry = (index: number, entryTerm: number, data: Uint8Array): Entry => ({
  index: logIndex(index), term: term(entryTerm), kind: 'normal', data,
});

describe('sim: scenarios: raft: checker', () => {
  test('the two commands collide under FNV-1a-32 (the premise of the tests below)', () => {
    assert.equal(A.length, B.length);
    assert.equal(fnv1a(A), fnv1a(B));
    assert.notDeepEqual(A, B);
  });

  test('log matching: a different command at the same index and term is caught', () => {
    const checker = new RaftChecker(() => 0);
    const termBefore = (): number => 1;
    checker.onAppend(nodeId('n1'), [entry(2, 1, A)], termBefore);
    checker.onAppend(nodeId('n2'), [entry(2, 1, A)], termBefore);
    assert.deepEqual(checker.violations, []);
    checker.onAppend(nodeId('n3'), [entry(2, 1, B)], termBefore);
    assert.equal(first(checker)?.checker, 'log-matching');
    assert.match(first(checker)!.message, /command bytes differ from byte 10/);
  });

  test('state-machine safety: a different command applied at one index is caught', () => {
    const checker = new RaftChecker(() => 0);
    checker.onApply(nodeId('n1'), entry(5, 2, A));
    checker.onApply(nodeId('n2'), entry(5, 2, A));
    assert.deepEqual(checker.violations, []);
    checker.onApply(nodeId('n3'), entry(5, 2, B));
    assert.equal(first(checker)?.checker, 'state-machine-safety');
  });

  test('leader completeness: a leader holding a different committed command is caught', () => {
    const checker = new RaftChecker(() => 0);
    checker.onApply(nodeId('n1'), entry(1, 1, A));
    checker.onCommitStored({ term: term(1), vote: undefined, commitIndex: logIndex(1) });
    const log = (index: LogIndex): Entry | undefined => (index === 1 ? entry(1, 1, B) : undefined);
    checker.onLeader(nodeId('n2'), term(2), log);
    assert.equal(first(checker)?.checker, 'leader-completeness');
  });

  test('the checker keeps a copy: a node reusing its buffer cannot rewrite history', () => {
    const checker = new RaftChecker(() => 0);
    const buffer = A.slice();
    checker.onApply(nodeId('n1'), entry(1, 1, buffer));
    buffer.set(B);
    checker.onApply(nodeId('n2'), entry(1, 1, A));
    assert.deepEqual(checker.violations, []);
  });
});
