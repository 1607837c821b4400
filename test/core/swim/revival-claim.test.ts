/**
 * swim: the claim that fences a revival. Goal: the old coordinator of a side that has not yet
 * counted the far side dead does not claim, on the news of a member re-admitted over there, the
 * generation that the far side's coordinator already holds (`sim --scenario gossip --members
 * 100 --seed 2 --loss 0.01`: n3 claimed 8 in the majority, then n2, the minority's coordinator,
 * not yet latched, claimed 8 too after the heal; `one-coordinator-per-generation`). It asks the
 * revived member for its full state first, and that answer carries the far side's claim.
 * Method: the deterministic harness; the old coordinator is paused through the partition (so
 * that it counts nobody dead, as a side too slow to latch), and the first news it hears after
 * the heal is the re-admission.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../src/core/ids.js';
import type { GossipUpdate } from '../../../src/core/swim/index.js';
import { SwimHarness } from './harness.js';

/** Each generation named leader by any member, with every id named at it. */
function coordinatorsByGeneration(h: SwimHarness): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (const { event } of h.eventsOf('leader-changed')) {
    if (event.kind !== 'leader-changed' || event.leader === undefined) continue;
    const ids = out.get(event.leader.generation) ?? new Set<string>();
    ids.add(event.leader.id);
    out.set(event.leader.generation, ids);
  }
  return out;
}

describe('swim: the claim that fences a revival', () => {
  test('an old coordinator that hears of a re-admission first does not claim the far side\'s generation', () => {
    const h = new SwimHarness({ seed: 5 });
    h.startCluster(5);
    const live = (names: string[], leader: string): boolean => names.every((name) =>
      h.member(name).leader()?.id === leader);
    assert.ok(h.runUntil(h.nowMs + 20_000, () => live(['n1', 'n2', 'n3', 'n4', 'n5'], 'n1')
      && h.liveMembers().every((m) => m.status().stableMembers === 5)));
    const n1 = h.member('n1');
    // n5 crashes; every member, n1 included, holds it dead.
    h.crash('n5');
    assert.ok(h.runUntil(h.nowMs + 20_000, () => ['n1', 'n2', 'n3', 'n4'].every((name) =>
      h.member(name).member(nodeId('n5'))?.state === 'dead')));
    const before = n1.status().generationMax;
    // n1 is cut off and stalls: the others declare it dead and n2 claims; n1 counts nobody dead.
    h.partition(['n1'], ['n2', 'n3', 'n4', 'n5']);
    h.pause('n1');
    assert.ok(h.runUntil(h.nowMs + 30_000, () => live(['n2', 'n3', 'n4'], 'n2')));
    // n5 restarts over there and is admitted again, with a new age.
    h.restart('n5', ['n3']);
    assert.ok(h.runUntil(h.nowMs + 20_000, () => live(['n2', 'n3', 'n4', 'n5'], 'n2')
      && ['n2', 'n3', 'n4'].every((name) =>
        h.member(name).member(nodeId('n5'))?.state === 'alive')));
    const farClaim = h.member('n2').status().generationMax;
    assert.ok(farClaim > before, `n2 claimed: ${farClaim} after ${before}`);
    // The heal: the first news n1 hears is n5's re-admission (no news of n2's claim in it).
    h.resume('n1');
    h.heal();
    const revived = h.member('n4').member(nodeId('n5'));
    assert.ok(revived !== undefined && revived.state === 'alive', JSON.stringify(revived));
    const update: GossipUpdate = {
      member: revived.id, state: 'alive', incarnation: revived.incarnation, age: revived.age,
      address: revived.address,
    };
    n1.step(nodeId('n4'), { kind: 'gossip', updates: [update] }, h.nowMs);
    // Before: n1 claimed `before + 1` at once, the generation n2 had claimed first.
    assert.equal(n1.status().generationMax, before, 'n1 claimed before asking n5');
    h.flush(n1);
    assert.ok(h.runUntil(h.nowMs + 20_000, () => h.liveMembers().every((m) =>
      m.leader()?.id === 'n2' && m.leader()?.generation === h.member('n2').leader()?.generation)),
    h.liveMembers().map((m) => `${m.id}:${m.leader()?.id}@${m.leader()?.generation}`).join(' '));
    for (const [generation, ids] of coordinatorsByGeneration(h)) {
      assert.equal(ids.size, 1, `generation ${generation} has coordinators ${[...ids].join(', ')}`);
    }
    assert.equal(h.eventsOf('rejoined').filter((e) => e.at === 'n1').length, 1, 'n1 rejoined');
  });
});
