/**
 * Goal: each planted lease bug (src/runtime/lease LeaseMutants) is caught by scenario `lease`
 * within a few seeds, by the checker that guards the rule it breaks; the same seeds pass
 * without it (lease-scenario.test.ts runs the clean batch).
 * Method: seeds from 1 until the first violation, within a cap. Found when written (3 members,
 * 6 clients): deposedLeaderRevokes at seed 1 (caught in 42 of seeds 1–60), ttlResetOnElection
 * at seed 3 (34 of 60; seeds without leadership transfers rarely catch it).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runLeaseSeed } from '../../../../src/sim/scenarios/lease/index.js';
import type { ScenarioOptions } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 3, clients: 6, 'safety-s': 10 };

function firstCaught(mutant: string, cap: number): { seed: number; checker: string } | undefined {
  for (let seed = 1; seed <= cap; seed++) {
    const result = runLeaseSeed(seed, { ...OPTIONS, mutant });
    const first = result.violations[0];
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
});
