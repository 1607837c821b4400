/**
 * swim: member. Goal: the SWIM protocol with Lifeguard behaves as the papers say on small
 * clusters: joins converge, crashes are detected within the documented bound and agreed on,
 * live members refute suspicion and are never declared dead without loss, indirect probes
 * route around a broken link, a slow member doubts itself instead of accusing others, and
 * departures are graceful. Method: the deterministic harness (seeded latency, virtual time
 * advanced to each member's next deadline), with assertions on views, events and counters.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../src/core/ids.js';
import {
  swimDeathDeclarationBoundMs, SWIM_DEFAULTS_LOCAL, type SwimConfig,
} from '../../../src/core/swim/index.js';
import { SwimHarness, viewOf } from './harness.js';

function converged(h: SwimHarness, count: number): boolean {
  const live = h.liveMembers();
  const first = live[0];
  if (first === undefined) return false;
  const view = viewOf(first);
  return live.every((m) => viewOf(m) === view && m.status().membersAlive === count);
}

describe('swim: member', () => {
  for (const count of [5, 12, 20]) {
    test(`members joining through one seed converge to one view (N=${count})`, () => {
      const h = new SwimHarness({ seed: count });
      h.startCluster(count, 20);
      const startedAt = h.nowMs;
      assert.ok(h.runUntil(startedAt + 10_000, () => converged(h, count)),
        `no convergence: ${h.liveMembers().map(viewOf).join('\n')}`);
      // Every member knows every other member's age and the same incarnations.
      const ages = h.member('n1').members().map((m) => m.age);
      assert.deepEqual(ages, [...ages].sort((a, b) => a - b));
      assert.equal(new Set(ages).size, count, 'ages are unique when one seed admits everyone');
      assert.equal(h.eventsOf('suspect').length, 0, 'no suspicion without faults');
    });
  }

  test('a crashed member is suspected, then declared dead by everyone within the bound', () => {
    const h = new SwimHarness({ seed: 3 });
    h.startCluster(8);
    h.runFor(6000);
    const crashedAt = h.nowMs;
    h.crash('n5');
    const bound = swimDeathDeclarationBoundMs(SWIM_DEFAULTS_LOCAL, 8)
      + 10 * SWIM_DEFAULTS_LOCAL.gossipIntervalMs;
    const n5 = nodeId('n5');
    const allAgree = (): boolean => h.liveMembers().every((m) => m.member(n5)?.state === 'dead');
    assert.ok(h.runUntil(crashedAt + bound, allAgree), 'not everyone declared n5 dead in time');
    const suspects = h.eventsOf('suspect').filter((e) => e.event.atMs >= crashedAt);
    const deaths = h.eventsOf('dead');
    assert.ok(suspects.length > 0);
    assert.equal(deaths.length, 7, 'each live member declares it once');
    for (const { event } of deaths) {
      assert.ok(event.kind === 'dead' && event.member === 'n5');
      assert.ok(event.atMs > Math.min(...suspects.map((s) => s.event.atMs)), 'suspect first');
    }
    const declarer = deaths.find((e) => e.event.kind === 'dead' && e.event.declaredBy === e.at);
    assert.ok(declarer?.event.kind === 'dead' && declarer.event.confirmations.length >= 1,
      'the member that declared it names the accusers it counted');
  });

  test('a suspected but live member refutes, its incarnation rises, and it never dies', () => {
    const h = new SwimHarness({ seed: 4 });
    h.startCluster(6);
    h.runFor(6000);
    const before = h.member('n1').member(nodeId('n4'))?.incarnation ?? 0;
    // n4 stalls for a moment (every message to it is late, none is lost).
    h.delayInbound('n4', 400);
    h.runFor(1500);
    h.delayInbound('n4', 0);
    h.runFor(8000);
    const n4 = nodeId('n4');
    const suspected = h.eventsOf('suspect')
      .some((e) => e.event.kind === 'suspect' && e.event.member === n4);
    assert.ok(suspected, 'the stall must cause a suspicion, or this test proves nothing');
    assert.ok(h.member('n4').status().counters.refutations >= 1);
    assert.equal(h.eventsOf('dead').length, 0);
    for (const m of h.liveMembers()) {
      const record = m.member(n4);
      assert.equal(record?.state, 'alive', `${m.id} sees n4 ${record?.state}`);
      assert.ok((record?.incarnation ?? 0) > before, `${m.id}: incarnation did not rise`);
    }
    assert.ok(converged(h, 6));
  });

  test('indirect probes keep a member alive when the direct link to it is cut', () => {
    const h = new SwimHarness({ seed: 5 });
    h.startCluster(5);
    h.runFor(3000);
    h.block('n1', 'n3');
    h.block('n3', 'n1');
    h.runFor(15_000);
    const n1 = h.member('n1').status();
    assert.ok(n1.counters.probesAckedIndirect >= 2,
      `indirect acks: ${n1.counters.probesAckedIndirect}`);
    assert.equal(h.eventsOf('suspect').length, 0);
    assert.ok(converged(h, 5));
  });

  test('lifeguard: a member with slow inbound doubts itself instead of accusing others', () => {
    interface Outcome { accusations: number; falseDeaths: number; h: SwimHarness }
    const run = (lifeguard: boolean): Outcome => {
      const config: SwimConfig = { ...SWIM_DEFAULTS_LOCAL, lifeguard };
      const h = new SwimHarness({ seed: 11, config });
      h.startCluster(8);
      h.runFor(6000);
      const since = h.nowMs;
      // Everything n5 receives is 300 ms late: longer than a whole protocol period.
      h.delayInbound('n5', 300);
      h.runFor(20_000);
      const later = h.events.filter((e) => e.event.atMs >= since);
      const accusations = later.filter((e) => e.at === 'n5' && e.event.kind === 'suspect'
        && e.event.by === 'n5').length;
      const falseDeaths = later.filter((e) => e.event.kind === 'dead'
        && e.event.member !== 'n5').length;
      return { accusations, falseDeaths, h };
    };
    const on = run(true);
    const off = run(false);
    const status = on.h.member('n5').status();
    assert.ok(status.awarenessScore >= 3, `awareness ${status.awarenessScore}`);
    assert.ok(status.probeTimeoutMsNow >= 4 * SWIM_DEFAULTS_LOCAL.probeTimeoutMs);
    assert.ok(status.probeIntervalMsNow >= 4 * SWIM_DEFAULTS_LOCAL.probeIntervalMs);
    assert.equal(on.falseDeaths, 0, 'with Lifeguard no healthy member is declared dead');
    assert.ok(on.accusations <= 3, `with Lifeguard: ${on.accusations} accusations`);
    assert.ok(off.accusations >= 10 * Math.max(1, on.accusations),
      `without Lifeguard: ${off.accusations} accusations (with: ${on.accusations})`);
    assert.equal(off.h.member('n5').status().awarenessScore, 0);
  });

  test('with 10% datagram loss and Lifeguard, no live member is ever declared dead', () => {
    const h = new SwimHarness({ seed: 12, datagramLossRate: 0.1 });
    h.startCluster(10);
    h.runFor(60_000);
    assert.ok(h.eventsOf('suspect').length > 0, 'loss must cause suspicions');
    assert.equal(h.eventsOf('dead').length, 0);
    assert.ok(converged(h, 10));
  });

  test('a member that leaves is seen as left, never suspected or dead', () => {
    const h = new SwimHarness({ seed: 6 });
    h.startCluster(5);
    h.runFor(6000);
    h.leave('n4');
    h.runFor(2000);
    assert.equal(h.member('n4').nextDeadlineMs(), undefined, 'nothing left to send: it may exit');
    h.crash('n4'); // the process exits after its goodbye
    h.runFor(8000);
    const n4 = nodeId('n4');
    for (const m of h.liveMembers()) assert.equal(m.member(n4)?.state, 'left', m.id);
    const about = (kind: string): number => h.events
      .filter((e) => e.event.kind === kind && 'member' in e.event && e.event.member === n4).length;
    assert.equal(about('suspect') + about('dead'), 0);
    assert.equal(about('left'), 5, 'each member, n4 included, reports the departure once');
    assert.equal(h.member('n1').status().stableMembers, 4, 'a departure shrinks the stable set');
  });

  test('a restarted member rejoins under its id, with a younger age, higher incarnation', () => {
    const h = new SwimHarness({ seed: 7 });
    h.startCluster(5);
    h.runFor(6000);
    const n2 = nodeId('n2');
    const old = h.member('n1').member(n2);
    h.crash('n2');
    h.runFor(8000);
    assert.equal(h.member('n1').member(n2)?.state, 'dead');
    h.restart('n2', ['n3']);
    h.runFor(4000);
    assert.ok(converged(h, 5));
    const now = h.member('n1').member(n2);
    assert.ok(old !== undefined && now !== undefined);
    assert.ok(now.age > 5 && now.incarnation > old.incarnation, JSON.stringify(now));
  });

  test('a rejoiner keeps what it knows newer than the view it adopts (a refutation the sender missed)', () => {
    const h = new SwimHarness({ seed: 7 });
    h.startCluster(5);
    h.runFor(6000);
    const [n2, n5] = [nodeId('n2'), nodeId('n5')];
    const n5Member = h.member('n5');
    const refuted = n5Member.member(n2)!;
    const self = n5Member.member(n5)!;
    // n5 knows n2 at incarnation 1 above what the sender's view still says.
    const stale = { member: n2, state: 'dead' as const, incarnation: refuted.incarnation - 1,
      age: refuted.age, by: nodeId('n1') };
    assert.ok(stale.incarnation >= 0, JSON.stringify(refuted));
    const leader = n5Member.leader()!;
    // The acting side (n1, n5's coordinator) declared n5 dead and demands re-admission.
    n5Member.step(nodeId('n1'), {
      kind: 'push-pull', reply: true, acting: true,
      claim: { generation: leader.generation, by: leader.id },
      members: [{ member: n5, state: 'dead', incarnation: self.incarnation, age: self.age,
        readmit: true }, stale],
    } as never, h.nowMs);
    h.flush(n5Member);
    assert.equal(h.eventsOf('rejoined').filter((e) => e.at === 'n5').length, 1, 'n5 rejoined');
    assert.equal(n5Member.member(n2)?.state, 'alive', 'the rejoiner took a stale death');
    assert.equal(n5Member.member(n2)?.incarnation, refuted.incarnation);
  });

  test('joining tries the seeds in turn and reports each failed round', () => {
    const h = new SwimHarness({ seed: 8 });
    h.start('n1');
    h.runFor(100);
    h.start('n2', ['gone', 'n1']);
    h.runFor(SWIM_DEFAULTS_LOCAL.joinTimeoutMs + 100);
    assert.equal(h.member('n2').status().phase, 'member');
    h.start('n3', ['gone', 'missing']);
    h.runFor(2 * SWIM_DEFAULTS_LOCAL.joinTimeoutMs + 100);
    assert.equal(h.member('n3').status().phase, 'joining');
    assert.equal(h.eventsOf('join-failed').filter((e) => e.at === 'n3').length, 1);
  });

  test('the same seed gives the same run', () => {
    const trace = (seed: number): string => {
      const h = new SwimHarness({ seed });
      h.startCluster(6);
      h.runFor(3000);
      h.crash('n2');
      h.runFor(5000);
      return h.events.map((e) => `${e.at}:${JSON.stringify(e.event)}`).join('\n');
    };
    assert.equal(trace(21), trace(21));
    assert.notEqual(trace(21), trace(22));
  });

  test('per-member load does not grow with the cluster size', () => {
    const bytesPerMemberSecond = (count: number): number => {
      const h = new SwimHarness({ seed: count });
      h.startCluster(count, 10);
      h.runFor(8000);
      const bytes = h.bytesSent;
      h.runFor(10_000);
      return (h.bytesSent - bytes) / count / 10;
    };
    const small = bytesPerMemberSecond(5);
    const large = bytesPerMemberSecond(20);
    // Probes and gossip are O(1) per member; only push-pull grows with N.
    assert.ok(large < 4 * small, `${small.toFixed(0)} vs ${large.toFixed(0)} B/member/s`);
  });
});
