/**
 * Goal: each planted bug, in the servers' leases (src/runtime/lease LeaseMutants) or in the
 * election recipe (CampaignMutant), is caught by scenario `lease` within a few seeds, by the
 * checker that guards the rule it breaks; the same seeds pass without it (lease-scenario and
 * recipe-scenario tests run clean batches).
 * Method: seeds from 1 until the first violation of the named checker, within a cap. Found
 * with the elections and locks in the run (3 members, 6 lease clients, 4–6 election clients):
 * deposedLeaderRevokes at seed 1 (caught in 43 of seeds 1–60), ttlResetOnElection at seed 1
 * (40 of 60; seeds without leadership transfers rarely catch it), claimWithoutLeaseRecheck by
 * no-overlap at seed 4 (6 of 60; 59 of 60 caught by some checker, mostly `term`: the mutant
 * skips the claim, so its term restarts at 1; a run stops at its first violation).
 * sim-recipe-run.test.ts catches the same mutant by no-overlap in its directed shape.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runLeaseSeed } from '../../../../src/sim/scenarios/lease/index.js';
import type { ScenarioOptions } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 3, clients: 6, 'safety-s': 10 };

function firstCaught(mutant: string, cap: number, checker = /./):
  { seed: number; checker: string } | undefined {
  for (let seed = 1; seed <= cap; seed++) {
    const result = runLeaseSeed(seed, { ...OPTIONS, mutant });
    const first = result.violations.find((v) => checker.test(v.checker));
    if (first !== undefined) return { seed, checker: first.checker };
  }
  return undefined;
}

describe('sim: scenarios: lease: mutants', () => {
  test('deposedLeaderRevokes (a deposed office lives on) is caught by never-earlier', () => {
    const found = firstCaught('deposedLeaderRevokes', 10);
    assert.ok(found !== undefined, 'not caught in 10 seeds');
    assert.match(found.checker, /^(never-earlier|holder-safety)$/);
  });

  test('ttlResetOnElection (etcd#9395) is caught by not-much-later', () => {
    const found = firstCaught('ttlResetOnElection', 10);
    assert.ok(found !== undefined, 'not caught in 10 seeds');
    assert.match(found.checker, /^not-much-later/);
  });

  test('claimWithoutLeaseRecheck (etcd#11456) is caught by no-overlap', () => {
    const found = firstCaught('claimWithoutLeaseRecheck', 10, /^no-overlap$/);
    assert.ok(found !== undefined, 'no overlap in 10 seeds');
  });
});
