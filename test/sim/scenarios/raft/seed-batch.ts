/** Shared by the raft seed tests: run a batch and fail with every broken seed's replay command. */
import assert from 'node:assert/strict';
import { replayCommand } from '../../../../src/sim/runner.js';
import { raftScenario, runRaftSeed } from '../../../../src/sim/scenarios/raft/raft-scenario.js';
import type { Scenario } from '../../../../src/sim/scenario.js';

export const RAFT_OPTIONS = { 'safety-s': 10, 'liveness-s': 6, clients: 4, mutant: undefined };

export function runSeedBatch(nodes: number, firstSeed: number, count: number): void {
  const options = { ...RAFT_OPTIONS, nodes };
  const failures: string[] = [];
  let ok = 0;
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const result = runRaftSeed(seed, options);
    // Every history must be decided and linearizable: `unknown` or `too-big` proves nothing.
    if (result.violations.length === 0 && result.figures.linearizability === 'ok') {
      ok += result.figures.ok;
      continue;
    }
    if (result.violations.length === 0) {
      failures.push(`seed ${seed}: linearizability ${result.figures.linearizability}, not ok`);
      continue;
    }
    const first = result.violations[0]!;
    failures.push(`seed ${seed}: ${first.checker}: ${first.message}\n  replay: ` +
      replayCommand(raftScenario as Scenario<unknown>, seed, options));
  }
  assert.deepEqual(failures, []);
  // The workload must have done real work, or the checks above prove nothing.
  assert.ok(ok > count * 500, `only ${ok} successful client calls over ${count} seeds`);
}
