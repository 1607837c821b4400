/**
 * Goal: RaftLog's rules in isolation: the §5.4.1 up-to-date check, conflict detection, the fast
 * back-off lookup, suffix replacement, and persistence bookkeeping. Method: small logs built
 * from term lists.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AssertionError } from '../../../src/core/assert.js';
import { logIndex, term } from '../../../src/core/ids.js';
import type { Entry } from '../../../src/core/raft/index.js';
import { RaftLog } from '../../../src/core/raft/log.js';
import { logOf } from './harness.js';

const log = (terms: number[]): RaftLog => new RaftLog(logOf(terms).entries);
const entry = (i: number, t: number, size = 0): Entry =>
  ({ index: logIndex(i), term: term(t), kind: 'normal', data: new Uint8Array(size) });

describe('raft: log', () => {
  test('isUpToDate compares last terms first, then lengths (Raft §5.4.1)', () => {
    const l = log([1, 2, 2]);
    assert.equal(l.isUpToDate(1, 3), true);
    assert.equal(l.isUpToDate(3, 2), true);
    assert.equal(l.isUpToDate(2, 2), false);
    assert.equal(l.isUpToDate(9, 1), false);
    assert.equal(log([]).isUpToDate(0, 0), true);
  });

  test('findConflict names the first missing or different entry', () => {
    const l = log([1, 1, 2]);
    assert.equal(l.findConflict([entry(2, 1), entry(3, 2)]), undefined);
    assert.equal(l.findConflict([entry(2, 1), entry(3, 3)]), 3);
    assert.equal(l.findConflict([entry(3, 2), entry(4, 2)]), 4);
  });

  test('findConflictByTerm finds the last index whose term is not above the given one', () => {
    const l = log([1, 3, 3, 4, 4, 5, 5, 5, 6]);
    assert.deepEqual(l.findConflictByTerm(9, 7), { index: 9, term: 6 });
    assert.deepEqual(l.findConflictByTerm(9, 3), { index: 3, term: 3 });
    assert.deepEqual(l.findConflictByTerm(20, 4), { index: 5, term: 4 });
    assert.deepEqual(l.findConflictByTerm(9, 0), { index: 0, term: 0 });
  });

  test('truncateAndAppend replaces the suffix and forgets its persistence', () => {
    const l = log([1, 1, 2, 2]);
    assert.equal(l.getStableIndex(), 4);
    assert.equal(l.truncateAndAppend([entry(3, 3)]), 2);
    assert.deepEqual([l.lastIndex(), l.lastTerm(), l.getStableIndex()], [3, 3, 2]);
    assert.deepEqual(l.unpersisted().map((e) => e.index), [3]);
    l.markPersistRequested();
    l.stableTo(logIndex(3), term(2)); // a write of the replaced entry: ignored
    assert.equal(l.getStableIndex(), 2);
    l.stableTo(logIndex(3), term(3));
    assert.equal(l.getStableIndex(), 3);
  });

  test('sliceForMessage bounds entries and bytes but always sends one entry', () => {
    const l = log([]);
    for (let i = 1; i <= 5; i++) l.append(entry(i, 1, 100));
    assert.equal(l.sliceForMessage(1, 3, 10_000).length, 3);
    assert.equal(l.sliceForMessage(1, 10, 2 * 116).length, 2);
    assert.equal(l.sliceForMessage(1, 10, 1).length, 1);
    assert.equal(l.sliceForMessage(6, 10, 10_000).length, 0);
  });

  test('appends that skip an index or lower the term are programmer errors', () => {
    const l = log([1, 2]);
    assert.throws(() => l.append(entry(4, 2)), AssertionError);
    assert.throws(() => l.append(entry(3, 1)), AssertionError);
    assert.throws(() => new RaftLog([entry(2, 1)]), AssertionError);
  });
});
