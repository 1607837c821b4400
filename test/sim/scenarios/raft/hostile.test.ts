/**
 * sim: scenarios: raft --hostile — a forger injects every Raft message kind with extreme fields
 * through the safety phase (src/sim/scenarios/raft/hostile-actor.ts), as the non-member `evil`
 * (authenticated model) or also under members' ids with frames no correct member could send
 * (unauthenticated model). Every checker must hold (election safety, log matching, leader
 * completeness, state machine safety, term provenance, nothing forged stored or applied,
 * liveness after the heal, linearizability), and the cores must reject each kind of
 * contradiction. The long run is `npx conclave sim --scenario raft --nodes 5 --seeds 2000
 * --hostile` (docs/simulation.md).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REJECTION_REASONS } from '../../../../src/core/raft/index.js';
import { replayCommand } from '../../../../src/sim/runner.js';
import { raftScenario, runRaftSeed } from '../../../../src/sim/scenarios/raft/raft-scenario.js';
import type { Scenario } from '../../../../src/sim/scenario.js';
import { RAFT_OPTIONS } from './seed-batch.js';

describe('sim: scenarios: raft: hostile', () => {
  test('20 seeds (10 per model) hold every invariant; every rejection reason shows up', () => {
    const options = { ...RAFT_OPTIONS, nodes: 5, snapshots: false, membership: false,
      hostile: true, 'hostile-model': 'both' };
    const failures: string[] = [];
    const rejected = new Map<string, number>();
    let forged = 0;
    let ok = 0;
    for (let seed = 70_000; seed < 70_020; seed++) {
      const result = runRaftSeed(seed, options);
      ok += result.figures.ok;
      forged += (result.figures.hostile?.asSelf ?? 0) + (result.figures.hostile?.spoofed ?? 0);
      for (const [reason, n] of Object.entries(result.figures.rejected)) {
        rejected.set(reason, (rejected.get(reason) ?? 0) + n);
      }
      const first = result.violations[0];
      if (first !== undefined) {
        failures.push(`seed ${seed}: ${first.checker}: ${first.message}\n  replay: ` +
          replayCommand(raftScenario as Scenario<unknown>, seed, options));
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(ok > 20 * 500, `only ${ok} successful client calls`);
    assert.ok(forged > 20 * 100, `only ${forged} forged frames`);
    // Chunk counts need tiny chunks of one long snapshot: the core tests cover that reason.
    const expected = REJECTION_REASONS.filter((r) => r !== 'snapshot-too-many-chunks');
    for (const reason of expected) assert.ok((rejected.get(reason) ?? 0) > 0, `no ${reason}`);
  });
});
