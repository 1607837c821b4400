/**
 * Goal: the snapshots-agree checker flags two snapshots at the same index with different bytes,
 * whoever took or installed them, and nothing else. Method: events fed by hand.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId } from '../../../../src/core/ids.js';
import type { SnapshotEvent } from '../../../../src/runtime/raft/index.js';
import type { Violation } from '../../../../src/sim/scenario.js';
import { SnapshotChecker } from '../../../../src/sim/scenarios/lease/snapshot-checker.js';

const event = (kind: SnapshotEvent['kind'], index: number, text: string): SnapshotEvent => {
  const data = new TextEncoder().encode(text);
  return { kind, index: logIndex(index), data, sizeBytes: data.length };
};

describe('sim: scenarios: lease: snapshots-agree', () => {
  test('equal snapshots at an index pass; a different one is flagged, naming both', () => {
    const violations: Violation[] = [];
    const checker = new SnapshotChecker(() => 42, violations);
    checker.observe(nodeId('n1'), event('taken', 10, 'state@10'));
    checker.observe(nodeId('n2'), event('taken', 10, 'state@10'));
    checker.observe(nodeId('n3'), event('installed', 10, 'state@10'));
    checker.observe(nodeId('n1'), event('saved', 10, 'ignored'));
    checker.observe(nodeId('n1'), event('taken', 20, 'state@20'));
    assert.equal(violations.length, 0);
    assert.deepEqual(checker.counts, { taken: 3, installed: 1, compared: 2 });
    checker.observe(nodeId('n2'), event('installed', 20, 'state@20 but other'));
    assert.equal(violations.length, 1);
    assert.equal(violations[0]?.checker, 'snapshots-agree');
    assert.match(violations[0]?.message ?? '',
      /n2's snapshot at index 20 \(installed.*n1's \(taken/);
  });
});
