/**
 * sim: scenarios: raft — with the operator nemesis (`--membership --snapshots`: members added as
 * learners, promoted and removed, leadership transfers, snapshots every few entries and
 * followers down long enough to need InstallSnapshot), seeds hold every invariant, the
 * membership checker included; and the two planted bugs these features guard against are
 * caught within a few seeds: reads served locally without ReadIndex (linearizability) and a
 * membership change before the leader's first commit of its term (disjoint majorities).
 * Method: the real scenario, seed by seed; failures print the replay command.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayCommand } from '../../../../src/sim/runner.js';
import { raftScenario, runRaftSeed } from '../../../../src/sim/scenarios/raft/raft-scenario.js';
import type { Scenario, ScenarioOptions } from '../../../../src/sim/scenario.js';
import { RAFT_OPTIONS } from './seed-batch.js';

const OPERATORS = { ...RAFT_OPTIONS, nodes: 5, membership: true, snapshots: true };

/** The first seed from `firstSeed` whose run breaks `checker`, trying at most `count`. */
function firstCaught(options: ScenarioOptions, checker: string, firstSeed: number,
  count: number): number | undefined {
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    if (runRaftSeed(seed, options).violations.some((v) => v.checker === checker)) return seed;
  }
  return undefined;
}

describe('sim: scenarios: raft: operators', () => {
  test('40 seeds with membership changes, transfers and snapshots hold every invariant', () => {
    const failures: string[] = [];
    let changes = 0;
    let installs = 0;
    for (let seed = 70_000; seed < 70_040; seed++) {
      const result = runRaftSeed(seed, OPERATORS);
      changes += result.figures.membershipChangesApplied;
      installs += result.figures.snapshotsInstalled;
      const first = result.violations[0];
      if (first !== undefined) {
        failures.push(`seed ${seed}: ${first.checker}: ${first.message}\n  replay: ` +
          replayCommand(raftScenario as Scenario<unknown>, seed, OPERATORS));
      }
    }
    assert.deepEqual(failures, []);
    // The operator nemesis must have acted, or the checks above prove little.
    assert.ok(changes > 40 * 3, `only ${changes} membership changes applied`);
    assert.ok(installs > 40, `only ${installs} snapshots installed from a leader`);
  });

  test('mutant readsWithoutReadIndex is caught by linearizability within 15 seeds', () => {
    const options = { ...RAFT_OPTIONS, nodes: 5, mutant: 'readsWithoutReadIndex' };
    assert.notEqual(firstCaught(options, 'linearizability', 1, 15), undefined);
  });

  test('mutant configChangeBeforeTermCommit is caught by the membership checker within 15 seeds', () => {
    const options = { ...OPERATORS, mutant: 'configChangeBeforeTermCommit' };
    assert.notEqual(firstCaught(options, 'membership', 1, 15), undefined);
  });
});
