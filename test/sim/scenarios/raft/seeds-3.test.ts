/**
 * sim: scenarios: raft — 150 seeds of a 3-node cluster under the full nemesis (swarm faults and
 * tuning), each checked for election safety, log matching, leader completeness, state machine
 * safety, terms and votes on disk, liveness after the heal and linearizability.
 * A failure message carries the replay command.
 */
import { describe, test } from 'node:test';
import { runSeedBatch } from './seed-batch.js';

describe('sim: scenarios: raft: 3 nodes', () => {
  test('150 seeds hold every invariant', () => runSeedBatch(3, 30_000, 150));
});
