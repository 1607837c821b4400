/**
 * sim: scenarios: raft mutants — every planted Raft bug is caught by a simulation, and the same
 * simulations pass on the correct code. Proof that the checkers have teeth.
 * Method: run seeds of the scenario that targets each mutant until the first violation, within a
 * cap; the seeds-to-detection are what the closing notes report.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAckCrashSeed } from '../../../src/sim/scenarios/raft/ack-crash-scenario.js';
import { runFigure8Seed } from '../../../src/sim/scenarios/raft/figure8-scenario.js';
import { runPartialPartitionSeed } from '../../../src/sim/scenarios/raft/partial-partition-scenario.js';
import { runRaftSeed } from '../../../src/sim/scenarios/raft/raft-scenario.js';
import { runVoteRestartSeed } from '../../../src/sim/scenarios/raft/vote-restart-scenario.js';
import type { ScenarioOptions, SeedResult } from '../../../src/sim/scenario.js';

type Run = (seed: number, options: ScenarioOptions) => SeedResult<unknown>;

/** The first seed (from 1) whose run breaks an invariant, or undefined within `cap` seeds. */
function seedsToDetection(run: Run, options: ScenarioOptions, cap: number): { seed: number; checker: string } | undefined {
  for (let seed = 1; seed <= cap; seed++) {
    const result = run(seed, options);
    if (result.violations.length > 0) return { seed, checker: result.violations[0]!.checker };
  }
  return undefined;
}

function assertClean(run: Run, options: ScenarioOptions, seeds: number): void {
  for (let seed = 1; seed <= seeds; seed++) {
    assert.deepEqual(run(seed, options).violations, [], `seed ${seed} without a mutant`);
  }
}

const RAFT = { 'safety-s': 10, 'liveness-s': 6, clients: 4 };

describe('sim: scenarios: raft mutants', () => {
  test('noNoopAtTermStart is caught by the raft scenario (fully-committed)', () => {
    const found = seedsToDetection(runRaftSeed as Run, { ...RAFT, nodes: 5, mutant: 'noNoopAtTermStart' }, 10);
    assert.equal(found?.checker, 'fully-committed');
  });

  test('ackBeforeSync is caught by raft-ack-crash (leader completeness); clean without it', () => {
    const found = seedsToDetection(runAckCrashSeed as Run, { mutant: 'ackBeforeSync' }, 10);
    assert.equal(found?.checker, 'leader-completeness');
    assertClean(runAckCrashSeed as Run, { mutant: undefined }, 10);
  });

  test('voteNotPersisted is caught by raft-vote-restart (election safety); clean without it', () => {
    const found = seedsToDetection(runVoteRestartSeed as Run, { mutant: 'voteNotPersisted' }, 20);
    assert.equal(found?.checker, 'election-safety');
    assertClean(runVoteRestartSeed as Run, { mutant: undefined }, 10);
  });

  test('voteNotPersisted is caught by raft-vote-restart at 5 nodes too; clean without it', () => {
    const found = seedsToDetection(runVoteRestartSeed as Run,
      { nodes: 5, mutant: 'voteNotPersisted' }, 20);
    assert.equal(found?.checker, 'election-safety');
    assertClean(runVoteRestartSeed as Run, { nodes: 5, mutant: undefined }, 10);
  });

  test('commitPreviousTermByCount is caught by raft-figure8 (leader completeness); clean without it', () => {
    const found = seedsToDetection(runFigure8Seed as Run, { mutant: 'commitPreviousTermByCount' }, 10);
    assert.equal(found?.checker, 'leader-completeness');
    assertClean(runFigure8Seed as Run, { mutant: undefined }, 10);
  });

  test('trustSenderTerm is caught by raft --hostile (term provenance), in both models', () => {
    for (const model of ['authenticated', 'unauthenticated']) {
      const options = { ...RAFT, nodes: 5, hostile: true, 'hostile-model': model,
        mutant: 'trustSenderTerm' };
      const found = seedsToDetection(runRaftSeed as Run, options, 3);
      assert.equal(found?.checker, 'term-provenance', `${model}: ${JSON.stringify(found)}`);
    }
  });

  test('preVoteWithoutCheckQuorum is caught by raft-partial-partition (commits stop); clean without it', () => {
    const options = { nodes: 3, 'partition-s': 30 };
    const found = seedsToDetection(runPartialPartitionSeed as Run, { ...options, mutant: 'preVoteWithoutCheckQuorum' }, 6);
    assert.equal(found?.checker, 'majority-keeps-committing');
    assertClean(runPartialPartitionSeed as Run, { ...options, mutant: undefined }, 6);
  });
});
