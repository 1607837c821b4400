/**
 * sim: scenarios: gossip --hostile — a forger without the keyring sends every SWIM kind with
 * values beyond the bounds (src/sim/scenarios/gossip/hostile-gossip.ts). Goal: every checker
 * holds; in particular the seed that found the refutation trap (seed 11 at 100 members: an
 * accusation taken at the edge of the self bound made its target refute one past what every
 * peer accepts, and they held it dead for good) stays fixed, and so does the seed that found
 * the generation ratchet (seed 14). Method: `runGossipSeed` with `hostile: true`, as
 * `conclave sim --scenario gossip --hostile` runs it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runGossipSeed } from '../../../../src/sim/scenarios/gossip/index.js';
import type { ScenarioOptions } from '../../../../src/sim/scenario.js';

const HOSTILE: ScenarioOptions = {
  members: 100, loss: undefined, 'duration-s': undefined, lifeguard: 'on',
  strategy: 'keep-majority', profile: 'local', hostile: true,
};

describe('sim: scenarios: gossip under a forger', () => {
  test('seed 11 at 100 members: the target of an edge accusation is not held dead', () => {
    const result = runGossipSeed(11, HOSTILE);
    assert.deepEqual(result.violations, [], 'replay: npx conclave sim --scenario gossip '
      + '--seed 11 --seeds 1 --members 100 --hostile');
    const hostile = result.figures.runs[0]?.hostile;
    assert.ok(hostile !== undefined && hostile.sent > 1000 && hostile.rejected > 1000,
      `the forger spoke and was refused: ${JSON.stringify(hostile)}`);
  });

  test('seed 13 at 100 members: rejoiners pass on no stale deaths after the heal', () => {
    // Before the rejoin fix (SwimMember.adoptRecord), members rejoining after the partition
    // adopted a view that still held refuted members dead: 12 lives wrongly ended. Then one
    // rejoiner still demanded re-admission where its peers took refutations (view-agreement),
    // until a rejoiner took the sender's verdict on re-admission with each dead record.
    const result = runGossipSeed(13, HOSTILE);
    assert.deepEqual(result.violations, [], 'replay: npx conclave '
      + 'sim --scenario gossip --seed 13 --seeds 1 --members 100 --hostile');
  });

  test('seed 14 at 100 members: the generation ratchet leaves nobody refusing the leader', () => {
    // Before the catch-up (SwimMember.catchUpWith), a forged claim just past the step arrived
    // at a member after an honest claim had raised its highest claim; the leader claimed one
    // above it, beyond the bound of 91 members, which then named no leader for good
    // (`none`×91, `n2@1031`×9 twenty seconds after the faults).
    const result = runGossipSeed(14, HOSTILE);
    assert.deepEqual(result.violations, [], 'replay: npx conclave '
      + 'sim --scenario gossip --seed 14 --seeds 1 --members 100 --hostile');
  });

  test('seed 1 at 8 members, 12 forged joins: the leader comes back after the flood', () => {
    const result = runGossipSeed(1, { ...HOSTILE, members: 8, hostile: false,
      'join-flood': 12 });
    // Before the stable set dropped the dead that never answered, every member named no
    // leader from the flood on (docs/gossip.md, "Bounds on what a message may say").
    assert.deepEqual(result.violations, [], 'replay: npx conclave sim --scenario gossip '
      + '--seed 1 --seeds 1 --members 8 --join-flood 12');
    assert.equal(result.figures.runs[0]?.hostile, undefined);
  });
});
