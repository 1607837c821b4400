/**
 * sim: scenarios: raft: the membership checker. Goal: it knows which pairs of voter sets can
 * have disjoint majorities, flags two alive configurations that can, and stops counting a
 * configuration once a later term commits (the rule a correct leader keeps). Method: direct
 * calls with hand-made config entries and commit reports.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term, type LogIndex } from '../../../../src/core/ids.js';
import { encodeMembership, type Entry } from '../../../../src/core/raft/index.js';
import {
  ConfigChecker, disjointMajorities,
} from '../../../../src/sim/scenarios/raft/config-checker.js';

const ids = (...names: string[]) => names.map(nodeId);
const config = (index: number, t: number, voters: string[]): Entry => ({
  index: logIndex(index), term: term(t), kind: 'config',
  data: encodeMembership({ voters: ids(...voters), learners: [] }),
});

describe('sim: scenarios: raft: config checker', () => {
  test('single-server changes overlap; two different ones from an even set may not', () => {
    assert.equal(disjointMajorities(ids('a', 'b', 'c', 'd'), ids('a', 'b', 'c')), undefined);
    assert.equal(disjointMajorities(ids('a', 'b', 'c', 'd', 'e'), ids('a', 'b', 'c', 'd')), undefined);
    assert.deepEqual(disjointMajorities(ids('a', 'b', 'c'), ids('a', 'b', 'd')), [['c', 'a'], ['d', 'b']]);
    assert.ok(disjointMajorities(ids('a', 'b', 'c', 'd', 'e'), ids('a', 'b', 'c')) !== undefined);
  });

  test('two alive siblings that can form disjoint majorities are flagged', () => {
    const failures: string[] = [];
    const checker = new ConfigChecker(ids('a', 'b', 'c', 'd'), (m) => failures.push(m));
    checker.onAppend(config(5, 1, ['a', 'b', 'c', 'd', 'e'])); // term 1: promote e, uncommitted
    checker.afterStep();
    assert.deepEqual(failures, []);
    checker.onAppend(config(5, 2, ['a', 'b', 'c'])); // term 2, before any commit of term 2
    checker.afterStep();
    assert.equal(failures.length, 1);
    assert.match(failures[0]!, /disjoint majorities/);
  });

  test('once an entry of a later term commits, the older uncommitted change no longer counts', () => {
    const failures: string[] = [];
    const checker = new ConfigChecker(ids('a', 'b', 'c', 'd'), (m) => failures.push(m));
    checker.onAppend(config(5, 1, ['a', 'b', 'c', 'd', 'e']));
    checker.afterStep();
    // A leader of term 2 commits its no-op at index 5 (replacing the term-1 change), then changes.
    const terms = new Map<number, number>([[4, 1], [5, 2]]);
    checker.onCommit(5, (index: LogIndex) => terms.get(index));
    checker.onAppend(config(6, 2, ['a', 'b', 'c']));
    checker.afterStep();
    assert.deepEqual(failures, []);
  });
});
