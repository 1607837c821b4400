/**
 * swim: broadcast queue. Goal: one queued update per member, least-sent first and newest first
 * among equally sent ones, this member's own update before everything, dropped after the
 * retransmit limit, within the count and byte budgets. Method: direct calls.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { incarnation, nodeId } from '../../../src/core/ids.js';
import { BroadcastQueue } from '../../../src/core/swim/broadcast-queue.js';
import { estimateUpdateBytes, memberAge, type GossipUpdate } from '../../../src/core/swim/index.js';

function alive(member: string, inc: number): GossipUpdate {
  return {
    member: nodeId(member), state: 'alive', incarnation: incarnation(inc), age: memberAge(1),
    address: `${member}:7946`,
  };
}

describe('swim: broadcast queue', () => {
  test('newer news about a member replaces the queued one', () => {
    const queue = new BroadcastQueue();
    queue.enqueue(alive('a', 1));
    queue.enqueue(alive('a', 2));
    assert.equal(queue.size, 1);
    assert.deepEqual(queue.take(10, 10_000, 3), [alive('a', 2)]);
  });

  test('each update is sent retransmitLimit times, least-sent first', () => {
    const queue = new BroadcastQueue();
    queue.enqueue(alive('a', 1));
    queue.take(10, 10_000, 3);
    queue.enqueue(alive('b', 1));
    assert.deepEqual(queue.take(1, 10_000, 3).map((u) => u.member), ['b']);
    const sent = new Map<string, number>();
    for (let i = 0; i < 10; i++) {
      for (const u of queue.take(10, 10_000, 3)) sent.set(u.member, (sent.get(u.member) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(sent), { a: 2, b: 2 });
    assert.equal(queue.size, 0);
  });

  test('takes stay within the count and byte budgets', () => {
    const queue = new BroadcastQueue();
    for (let i = 0; i < 50; i++) queue.enqueue(alive(`member-${i}`, 1));
    const one = estimateUpdateBytes(alive('member-10', 1));
    assert.equal(queue.take(5, 100_000, 4).length, 5);
    const fitted = queue.take(50, one * 3 + 1, 4);
    assert.equal(fitted.length, 3);
  });

  test('among updates sent equally often, the newest goes first (a backlog never delays it)', () => {
    const queue = new BroadcastQueue();
    for (let i = 0; i < 100; i++) queue.enqueue(alive(`old-${i}`, 1));
    queue.enqueue(alive('refutation', 7));
    assert.equal(queue.take(1, 10_000, 4)[0]?.member, 'refutation');
    assert.equal(queue.take(1, 10_000, 4)[0]?.member, 'old-99');
  });

  test("the member's own update goes first whatever it was sent, until its limit", () => {
    const queue = new BroadcastQueue();
    queue.enqueue(alive('self', 2));
    queue.take(1, 10_000, 3);
    for (let i = 0; i < 50; i++) queue.enqueue(alive(`other-${i}`, 1));
    const taken = queue.take(3, 10_000, 3, nodeId('self'));
    assert.deepEqual(taken.map((u) => u.member), ['self', 'other-49', 'other-48']);
    assert.equal(queue.take(3, 10_000, 3, nodeId('self'))[0]?.member, 'self');
    assert.notEqual(queue.take(3, 10_000, 3, nodeId('self'))[0]?.member, 'self',
      'sent its limit (3) times: gone');
  });
});
