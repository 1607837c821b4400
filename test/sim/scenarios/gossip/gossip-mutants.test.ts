/**
 * sim: scenarios: gossip: planted SWIM bugs. Goal: each mutant of `SwimMutants` is caught by
 * the checker named for it, on a seed of 16 members, and the same seed passes without it.
 * Method: `runGossipSeed` with `--mutant` (Lifeguard on, the shipped default).
 * - deadWithoutSuspicion → false-dead-bound: 5 % loss makes probes fail now and then, and
 *   each failure kills a live member; the fault model allows none.
 * - aliveAtEqualIncarnation → incarnation-order: stale alive news takes suspects back at their
 *   own incarnation.
 * - noPiggyback → view-agreement, in SWIM's own configuration (no separate gossip rounds,
 *   `gossipFanout` 0: dissemination rides on probes only). With the default gossip rounds the
 *   updates still travel by gossip and the mutant is masked; that is said in docs/gossip.md.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runGossipSeed } from '../../../../src/sim/scenarios/gossip/index.js';
import type { GossipTestOverrides } from '../../../../src/sim/scenarios/gossip/gossip-settings.js';
import type { ScenarioOptions } from '../../../../src/sim/scenario.js';

const BASE: ScenarioOptions = {
  members: 16, loss: 0.05, 'duration-s': undefined, lifeguard: 'on', strategy: 'keep-majority',
  profile: 'local', mutant: undefined,
};

function checkers(seed: number, options: ScenarioOptions, overrides: GossipTestOverrides = {}):
string[] {
  return [...new Set(runGossipSeed(seed, options, overrides).violations.map((v) => v.checker))];
}

describe('sim: scenarios: gossip: planted SWIM bugs', () => {
  test('deadWithoutSuspicion is caught by false-dead-bound', () => {
    assert.deepEqual(checkers(10, BASE), []);
    const found = checkers(10, { ...BASE, mutant: 'deadWithoutSuspicion' });
    assert.ok(found.includes('false-dead-bound'), found.join());
  });

  test('aliveAtEqualIncarnation is caught by incarnation-order', () => {
    const calm = { ...BASE, loss: undefined };
    assert.deepEqual(checkers(2, calm), []);
    const found = checkers(2, { ...calm, mutant: 'aliveAtEqualIncarnation' }, {
      stopAtFirstViolation: true,
    });
    assert.deepEqual(found, ['incarnation-order']);
  });

  test('noPiggyback is caught by view-agreement when probes are the only carrier', () => {
    const swimPaper: GossipTestOverrides = { config: { gossipFanout: 0 } };
    // Seeds 1, 11, 13, 14, 16 and 20 of 1-20 catch it by view-agreement first (2026-12-02,
    // after the revival claim moved the traces; seed 3 did before).
    assert.deepEqual(checkers(1, BASE, swimPaper), []);
    const found = checkers(1, { ...BASE, mutant: 'noPiggyback' }, swimPaper);
    assert.ok(found.includes('view-agreement'), found.join());
  });
});
