/**
 * Goal: each planted bug, in the servers' leases (src/runtime/lease LeaseMutants) or in the
 * election recipe (CampaignMutant), is caught by scenario `lease` within a few seeds, by the
 * checker that guards the rule it breaks; the same seeds pass without it (lease-scenario and
 * recipe-scenario tests run clean batches).
 * Method: seeds from 1 until the first violation of the named checker, within a cap. The
 * clients are the shipped client (ConclaveClient on the simulated network). Found with the
 * elections and locks in the run (3 members, 6 lease clients, 4–6 election clients):
 * deposedLeaderRevokes at seed 1, ttlResetOnElection at seed 1, claimWithoutLeaseRecheck at
 * seed 1 by `term` (the mutant skips the claim, so its term restarts at 1; of seeds 1–60, 56
 * are caught by `term`, 4 by `no-overlap` as well, the first at seed 23; a run stops at its
 * first violation). shipped-client.test.ts catches the same mutant by no-overlap in its
 * directed shape (a waiter's predecessor goes while the leader still holds).
 * heldWithoutClockCheck (held() from the signal alone) shows only with holders frozen past
 * their TTL (`--timing-violated`: within the assumptions no freeze outlasts the margin): of
 * seeds 1–20, all but 2 and 19 are caught by `held`, the first at seed 1.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runLeaseSeed } from '../../../../src/sim/scenarios/lease/index.js';
import type { ScenarioOptions } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 3, clients: 6, 'safety-s': 10 };

async function firstCaught(mutant: string, cap: number, checker = /./):
  Promise<{ seed: number; checker: string } | undefined> {
  for (let seed = 1; seed <= cap; seed++) {
    const result = await runLeaseSeed(seed, { ...OPTIONS, mutant });
    const first = result.violations.find((v) => checker.test(v.checker));
    if (first !== undefined) return { seed, checker: first.checker };
  }
  return undefined;
}

describe('sim: scenarios: lease: mutants', () => {
  test('deposedLeaderRevokes (a deposed office lives on) is caught by never-earlier', async () => {
    const found = await firstCaught('deposedLeaderRevokes', 10);
    assert.ok(found !== undefined, 'not caught in 10 seeds');
    assert.match(found.checker, /^(never-earlier|holder-safety)$/);
  });

  test('ttlResetOnElection (etcd#9395) is caught by not-much-later', async () => {
    const found = await firstCaught('ttlResetOnElection', 10);
    assert.ok(found !== undefined, 'not caught in 10 seeds');
    assert.match(found.checker, /^not-much-later/);
  });

  test('heldWithoutClockCheck is caught by held (holders frozen past their TTL)', async () => {
    let found: number | undefined;
    for (let seed = 1; seed <= 10 && found === undefined; seed++) {
      const result = await runLeaseSeed(seed, { ...OPTIONS, 'timing-violated': true,
        mutant: 'heldWithoutClockCheck' });
      if (result.violations.some((v) => v.checker === 'held')) found = seed;
    }
    assert.ok(found !== undefined, 'not caught in 10 seeds');
  });

  test('claimWithoutLeaseRecheck (etcd#11456) is caught by term or no-overlap', async () => {
    const found = await firstCaught('claimWithoutLeaseRecheck', 10, /^(term|no-overlap)$/);
    assert.ok(found !== undefined, 'not caught in 10 seeds');
  });
});
