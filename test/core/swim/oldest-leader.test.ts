/**
 * swim: emergent leader. Goal: every member with the same view names the same coordinator
 * (the oldest live member) without voting; the generation grows with each change of
 * coordinator and stale generations are rejected; the split-brain strategies decide which side
 * of a partition may act; after a heal one coordinator remains and the generation has moved
 * on. Method: the pure strategy function on tables of cases, then clusters in the
 * deterministic harness with crashes, leaves, partitions and heals.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generation, nodeId, type NodeId } from '../../../src/core/ids.js';
import {
  claimOrder, sideMayAct, StableMembership, SWIM_DEFAULTS_LOCAL, type CoordinatorClaim,
  type SideView, type SwimConfig, type SwimLeader,
} from '../../../src/core/swim/index.js';
import { SwimHarness } from './harness.js';

function side(stableSize: number, stableLive: number, oldestStableLive: boolean): SideView {
  return { stableSize, stableLive, oldestStableLive, liveCount: stableLive };
}

/** The one leader every live member reports, or undefined if they disagree or lack one. */
function agreedLeader(h: SwimHarness, names?: readonly string[]): SwimLeader | undefined {
  const members = names === undefined ? h.liveMembers() : names.map((n) => h.member(n));
  const first = members[0]?.leader();
  if (first === undefined) return undefined;
  const same = members.every((m) => {
    const l = m.leader();
    return l?.id === first.id && l.generation === first.generation;
  });
  return same ? first : undefined;
}

function stableCluster(seed: number, config?: SwimConfig): SwimHarness {
  const h = new SwimHarness(config === undefined ? { seed } : { seed, config });
  h.startCluster(5);
  // Past the stable-after time, so that the last stable membership holds all five.
  assert.ok(h.runUntil(h.nowMs + 20_000,
    () => h.liveMembers().every((m) => m.status().stableMembers === 5)));
  return h;
}

describe('swim: emergent leader: split-brain strategies', () => {
  test('keep-majority acts with more than half, and with half only holding the oldest', () => {
    assert.equal(sideMayAct('keep-majority', 0, side(5, 3, false)), true);
    assert.equal(sideMayAct('keep-majority', 0, side(5, 2, true)), false);
    assert.equal(sideMayAct('keep-majority', 0, side(4, 2, true)), true);
    assert.equal(sideMayAct('keep-majority', 0, side(4, 2, false)), false);
    assert.equal(sideMayAct('keep-majority', 0, side(1, 1, true)), true);
  });

  test('keep-oldest acts with the oldest, unless the oldest is alone', () => {
    assert.equal(sideMayAct('keep-oldest', 0, side(5, 2, true)), true);
    assert.equal(sideMayAct('keep-oldest', 0, side(5, 3, false)), false);
    assert.equal(sideMayAct('keep-oldest', 0, side(5, 1, true)), false, 'oldest alone');
    assert.equal(sideMayAct('keep-oldest', 0, side(5, 4, false)), true, 'the rest, oldest alone');
    assert.equal(sideMayAct('keep-oldest', 0, side(1, 1, true)), true);
  });

  test('static-quorum counts every live member against the quorum size', () => {
    assert.equal(sideMayAct('static-quorum', 3, { ...side(5, 2, true), liveCount: 3 }), true);
    assert.equal(sideMayAct('static-quorum', 3, side(5, 2, true)), false);
  });

  test('the stable membership counts its live members and knows its oldest', () => {
    const ages = new Map([['a', 3], ['b', 1], ['c', 2], ['d', 4]]);
    const lookup = (id: NodeId): { id: NodeId; age: number; live: boolean } | undefined => {
      const age = ages.get(id);
      return age === undefined ? undefined : { id, age, live: true };
    };
    const stable = new StableMembership();
    stable.reset(['a', 'b', 'c'].map((id) => lookup(nodeId(id))!));
    assert.equal(stable.oldest(lookup), 'b');
    stable.onLiveChange(nodeId('b'), false);
    assert.deepEqual([stable.size, stable.liveCount], [3, 2]);
    stable.add(lookup(nodeId('d'))!);
    assert.deepEqual([stable.size, stable.liveCount, stable.oldest(lookup)], [4, 3, 'b']);
    stable.remove(nodeId('b'), false);
    assert.deepEqual([stable.size, stable.liveCount, stable.oldest(lookup)], [3, 3, 'c']);
  });

  test('claims are ordered by generation, then by claimer id', () => {
    const claim = (g: number, by: string): CoordinatorClaim =>
      ({ generation: generation(g), by: nodeId(by) });
    assert.ok(claimOrder(claim(2, 'a'), claim(1, 'z')) > 0);
    assert.ok(claimOrder(claim(2, 'a'), claim(2, 'b')) < 0);
    assert.equal(claimOrder(claim(2, 'a'), claim(2, 'a')), 0);
    assert.ok(claimOrder({ generation: generation(1) }, claim(1, 'a')) < 0);
  });
});

describe('swim: emergent leader', () => {
  test('all members agree on the oldest member as coordinator, without voting', () => {
    const h = new SwimHarness({ seed: 1 });
    h.startCluster(7);
    h.runFor(2000);
    assert.deepEqual(agreedLeader(h), { id: 'n1', generation: 1 });
    const reasons = h.eventsOf('leader-changed')
      .map((e) => (e.event.kind === 'leader-changed' ? e.event.reason : ''));
    assert.deepEqual([...new Set(reasons)], ['joined']);
  });

  test('killing the oldest moves leadership to the next oldest with a higher generation', () => {
    const h = stableCluster(2);
    h.crash('n1');
    assert.ok(h.runUntil(h.nowMs + 10_000, () => agreedLeader(h)?.id === 'n2'));
    assert.deepEqual(agreedLeader(h), { id: 'n2', generation: 2 });
    h.crash('n2');
    assert.ok(h.runUntil(h.nowMs + 10_000, () => agreedLeader(h)?.id === 'n3'));
    assert.deepEqual(agreedLeader(h), { id: 'n3', generation: 3 });
    // n4 saw n1@1, then n2@2, then n3@3; in between it may have waited for the claim.
    const n4Changes = h.eventsOf('leader-changed').filter((e) => e.at === 'n4')
      .map((e) => (e.event.kind === 'leader-changed' ? e.event : undefined));
    const leaders = n4Changes.filter((e) => e?.leader !== undefined)
      .map((e) => `${e?.leader?.id}@${e?.leader?.generation}`);
    assert.deepEqual(leaders, ['n1@1', 'n2@2', 'n3@3']);
    const reasons = n4Changes.map((e) => e?.reason);
    assert.equal(reasons.filter((r) => r === 'oldest-died').length, 2, reasons.join());
    assert.ok(reasons.every((r) => ['joined', 'oldest-died', 'claimed'].includes(r ?? '')));
  });

  test('a leaving coordinator hands over to the next oldest, and its generation goes stale', () => {
    const h = stableCluster(3);
    const leftAt = h.nowMs;
    h.leave('n1');
    assert.ok(h.runUntil(h.nowMs + 3000,
      () => agreedLeader(h, ['n2', 'n3', 'n4', 'n5'])?.id === 'n2'));
    assert.ok(h.nowMs - leftAt < 1000, `hand-over took ${h.nowMs - leftAt} ms`);
    assert.deepEqual(agreedLeader(h, ['n2', 'n3', 'n4', 'n5']), { id: 'n2', generation: 2 });
    assert.equal(h.member('n1').leader(), undefined);
    const n3 = h.member('n3');
    assert.equal(n3.checkCoordinator(nodeId('n1'), generation(1)), 'stale-generation');
    assert.equal(n3.checkCoordinator(nodeId('n2'), generation(2)), 'ok');
    assert.equal(n3.checkCoordinator(nodeId('n4'), generation(2)), 'not-coordinator');
    const reason = h.eventsOf('leader-changed').find((e) => e.at === 'n3'
      && e.event.kind === 'leader-changed' && e.event.leader?.id === 'n2');
    assert.ok(reason?.event.kind === 'leader-changed');
    assert.ok(['oldest-left', 'claimed'].includes(reason.event.reason));
  });

  test('a coordinator declared dead while paused rejoins younger; its generation is stale', () => {
    const h = stableCluster(9);
    h.pause('n1');
    assert.ok(h.runUntil(h.nowMs + 15_000,
      () => agreedLeader(h, ['n2', 'n3', 'n4', 'n5'])?.id === 'n2'));
    const n3 = h.member('n3');
    assert.equal(n3.checkCoordinator(nodeId('n1'), generation(1)), 'stale-generation');
    const resumedAt = h.nowMs;
    h.resume('n1');
    assert.equal(h.member('n1').leader()?.id, 'n1', 'paused, n1 could not know');
    assert.ok(h.runUntil(h.nowMs + 10_000, () => agreedLeader(h)?.id === 'n2'
      && h.liveMembers().every((m) => m.status().membersAlive === 5)));
    // n1 yielded: it rejoined younger instead of taking the coordinator role back.
    const n1 = h.member('n3').member(nodeId('n1'));
    assert.ok(n1 !== undefined && n1.age > 5, JSON.stringify(n1));
    const regained = h.eventsOf('leader-changed').filter((e) => e.event.atMs >= resumedAt
      && e.event.kind === 'leader-changed' && e.event.leader?.id === 'n1');
    assert.deepEqual(regained, []);
    assert.equal(h.eventsOf('rejoined').map((e) => e.at).join(), 'n1');
  });

  for (const minority of [['n4', 'n5'], ['n1', 'n2']]) {
    const majority = ['n1', 'n2', 'n3', 'n4', 'n5'].filter((n) => !minority.includes(n));
    test(`keep-majority: partition ${majority.join('+')} | ${minority.join('+')}: only the `
      + 'majority acts; after the heal one coordinator, higher generation', () => {
      const h = stableCluster(4);
      const before = agreedLeader(h);
      assert.ok(before !== undefined);
      h.partition(majority, minority);
      h.runFor(15_000);
      const majorityLeader = agreedLeader(h, majority);
      assert.equal(majorityLeader?.id, majority[0], 'the majority follows its own oldest');
      for (const name of minority) {
        const m = h.member(name);
        assert.equal(m.leader(), undefined, `${name} must not see an acting coordinator`);
        assert.equal(m.status().acting, false);
        assert.equal(m.checkCoordinator(nodeId(minority[0]!), generation(1)), 'not-acting');
      }
      const generationInPartition = majorityLeader!.generation;
      h.heal();
      assert.ok(h.runUntil(h.nowMs + 20_000, () => {
        const l = agreedLeader(h);
        return l !== undefined && l.generation > generationInPartition
          && h.liveMembers().every((m) => m.status().membersAlive === 5);
      }), 'no single coordinator after the heal');
      const after = agreedLeader(h)!;
      assert.equal(after.id, majority[0], 'the majority coordinator stays');
      assert.ok(after.generation > before.generation);
      // The minority rejoined younger than every majority member.
      const ages = new Map(h.member('n3').members().map((m) => [m.id, m.age]));
      const youngestOfMajority = Math.max(...majority.map((n) => ages.get(nodeId(n))!));
      for (const name of minority) assert.ok(ages.get(nodeId(name))! > youngestOfMajority);
      assert.equal(h.eventsOf('rejoined').length, minority.length);
    });
  }

  test('keep-oldest: the side holding the oldest acts, even as a minority', () => {
    const config: SwimConfig = { ...SWIM_DEFAULTS_LOCAL, splitBrainStrategy: 'keep-oldest' };
    const h = stableCluster(5, config);
    h.partition(['n1', 'n2'], ['n3', 'n4', 'n5']);
    h.runFor(15_000);
    assert.deepEqual(agreedLeader(h, ['n1', 'n2']), { id: 'n1', generation: 1 });
    for (const name of ['n3', 'n4', 'n5']) assert.equal(h.member(name).leader(), undefined);
  });

  test('keep-oldest: when the oldest is alone, the others act', () => {
    const config: SwimConfig = { ...SWIM_DEFAULTS_LOCAL, splitBrainStrategy: 'keep-oldest' };
    const h = stableCluster(6, config);
    h.crash('n1');
    assert.ok(h.runUntil(h.nowMs + 10_000, () => agreedLeader(h)?.id === 'n2'));
  });

  test('static-quorum: a side acts only while it sees the quorum', () => {
    const config: SwimConfig = {
      ...SWIM_DEFAULTS_LOCAL, splitBrainStrategy: 'static-quorum', staticQuorumSize: 3,
    };
    const h = stableCluster(7, config);
    h.partition(['n1', 'n2'], ['n3', 'n4', 'n5']);
    h.runFor(15_000);
    assert.equal(agreedLeader(h, ['n3', 'n4', 'n5'])?.id, 'n3');
    for (const name of ['n1', 'n2']) assert.equal(h.member(name).leader(), undefined);
  });

  test('generations seen by any member never decrease', () => {
    const h = stableCluster(8);
    const last = new Map<NodeId, number>();
    const check = (): boolean => {
      for (const m of h.liveMembers()) {
        const g = m.status().generationMax;
        assert.ok(g >= (last.get(m.id) ?? 0), `${m.id}: generation went back to ${g}`);
        last.set(m.id, g);
      }
      return false;
    };
    h.crash('n1');
    h.runUntil(h.nowMs + 8000, check);
    h.partition(['n2', 'n3'], ['n4', 'n5']);
    h.runUntil(h.nowMs + 10_000, check);
    h.heal();
    h.runUntil(h.nowMs + 15_000, check);
    assert.ok(agreedLeader(h) !== undefined);
  });
});
