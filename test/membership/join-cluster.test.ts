/**
 * membership: joinCluster — three members in this process over real UDP and TCP sockets on
 * loopback, LOCAL profile: they join through one seed, agree on the oldest as leader, learn
 * each other's addresses from gossip, and when the oldest leaves gracefully the others see
 * 'left' and 'leader-changed' with the reason 'oldest-left' and a higher generation.
 * Method: real time, but every wait is a condition with a deadline; sockets closed in `after`.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { joinCluster, type Membership, type MembershipEvent } from '../../src/membership/index.js';

const started: Membership[] = [];
after(async () => {
  await Promise.all(started.map((m) => m.close()));
});

interface Joined {
  readonly membership: Membership;
  readonly events: MembershipEvent[];
}

async function start(name: string, seeds: readonly string[]): Promise<Joined> {
  const membership = await joinCluster({
    name, bind: '127.0.0.1:0', seeds, profile: 'local', clusterName: 'join-cluster-test',
  });
  started.push(membership);
  const events: MembershipEvent[] = [];
  membership.on('event', (event) => events.push(event));
  return { membership, events };
}

async function waitUntil(
  condition: () => boolean, deadlineMs: number, what: string,
): Promise<void> {
  const end = performance.now() + deadlineMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error(`timed out after ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('membership: joinCluster', () => {
  test('three members agree on the oldest; its graceful leave moves the leader on', async (t) => {
    const a = await start('a', []);
    const b = await start('b', [a.membership.address]);
    const c = await start('c', [a.membership.address]);
    const all = [a, b, c];
    await waitUntil(() => all.every(({ membership }) => membership.members().length === 3
      && membership.leader()?.id === 'a'), 10_000, 'all three see a as leader');
    const first = a.membership.leader()!.generation;
    for (const { membership } of all) assert.equal(membership.leader()?.generation, first);
    // Events from before joinCluster resolved were held for listeners added after `await`.
    assert.equal(b.events[0]?.kind, 'joined');
    assert.ok(b.events.some((e) => e.kind === 'leader-changed' && e.reason === 'joined'
      && e.leader?.id === 'a'), JSON.stringify(b.events));
    // Addresses come from gossip: c learned b's address though it joined through a.
    assert.equal(c.membership.member('b')?.address, b.membership.address);
    assert.equal(b.membership.member('c')?.address, c.membership.address);
    assert.deepEqual(b.membership.members().map((m) => m.id), ['a', 'b', 'c']);

    const leaveStartedMs = performance.now();
    await a.membership.leave();
    t.diagnostic(`leave() resolved after ${(performance.now() - leaveStartedMs).toFixed(0)} ms`);
    assert.equal(a.membership.status().lifecycle, 'closed');
    const rest = [b, c];
    await waitUntil(() => rest.every(({ membership }) => membership.leader()?.id === 'b'),
      10_000, 'b and c see b as leader');
    for (const { membership, events } of rest) {
      const leader = membership.leader()!;
      assert.ok(leader.generation > first, `generation ${leader.generation} after ${first}`);
      assert.equal(membership.member('a')?.state, 'left');
      assert.ok(events.some((e) => e.kind === 'left' && e.member === 'a'));
      const changes = events.filter((e) => e.kind === 'leader-changed');
      assert.ok(changes.some((e) => e.kind === 'leader-changed' && e.reason === 'oldest-left'),
        JSON.stringify(changes));
      assert.ok(!events.some((e) => e.kind === 'dead'), 'a graceful leave is not a death');
    }
  });

  test('no seed answers: rejects with CONCLAVE_UNAVAILABLE after joinDeadlineMs', async () => {
    const t0 = performance.now();
    await assert.rejects(joinCluster({
      name: 'lonely', bind: '127.0.0.1:0', seeds: ['127.0.0.1:9'], profile: 'local',
      joinDeadlineMs: 600,
    }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'CONCLAVE_UNAVAILABLE');
      assert.match(error.message, /127\.0\.0\.1:9/);
      return true;
    });
    assert.ok(performance.now() - t0 >= 550, 'rejected before the deadline');
  });
});
