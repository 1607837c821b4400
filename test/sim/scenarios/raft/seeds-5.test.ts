/**
 * sim: scenarios: raft — 150 seeds of a 5-node cluster (see seeds-3.test.ts for what is checked).
 */
import { describe, test } from 'node:test';
import { runSeedBatch } from './seed-batch.js';

describe('sim: scenarios: raft: 5 nodes', () => {
  test('150 seeds hold every invariant', () => runSeedBatch(5, 50_000, 150));
});
