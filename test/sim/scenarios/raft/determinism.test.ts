/**
 * sim: scenarios: raft — the same seed replays the same run (trace hash and figures), and a
 * different seed gives a different run.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runRaftSeed } from '../../../../src/sim/scenarios/raft/raft-scenario.js';
import { RAFT_OPTIONS } from './seed-batch.js';

describe('sim: scenarios: raft: determinism', () => {
  test('same seed, same trace hash and figures', () => {
    const options = { ...RAFT_OPTIONS, nodes: 5 };
    const a = runRaftSeed(77, options);
    const b = runRaftSeed(77, options);
    assert.equal(a.traceHash, b.traceHash);
    assert.deepEqual(a.figures, b.figures);
    assert.equal(a.events, b.events);
    assert.notEqual(runRaftSeed(78, options).traceHash, a.traceHash);
  });
});
