/**
 * Goal: the simulated client that phase 2's recipes will run on does what its interface says:
 * every call answers exactly once with ok, failed or unknown; grant, put with a lease, txn,
 * range, keep-alive, revoke and watch-for-delete reach the real ConsistentCore; the client
 * follows the leader after a transfer; a write nobody answers ends unknown and a read failed;
 * a lease holder's local deadline moves with acknowledged keep-alives and passes before the
 * lease ends once abandoned. Method: a LeaseWorld of 3 members with no nemesis, driven call by
 * call in virtual time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KvPutResult, KvRangeResult, KvTxnResult } from '../../../../src/core/kv/index.js';
import { LeaseChecker } from '../../../../src/sim/scenarios/lease/lease-checker.js';
import { drawLeaseSettings } from '../../../../src/sim/scenarios/lease/lease-settings.js';
import { LeaseWorld } from '../../../../src/sim/scenarios/lease/lease-world.js';
import type { SimAnswer } from '../../../../src/sim/scenarios/lease/sim-core-client.js';
import { SimLeaseKeeper } from '../../../../src/sim/scenarios/lease/sim-lease-keeper.js';
import { Prng } from '../../../../src/sim/prng.js';
import { Scheduler } from '../../../../src/sim/scheduler.js';
import { TraceHash } from '../../../../src/sim/trace-hash.js';

type Granted = { leaseId: number; ttlMs: number };

function quietWorld(seed: number): LeaseWorld {
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const settings = drawLeaseSettings(prng,
    { nodes: 3, clients: 2, 'safety-s': 10, mutant: undefined });
  const checker = new LeaseChecker(() => scheduler.nowMs, settings.timing, () => -Infinity);
  const world = new LeaseWorld(prng.fork(), scheduler, new TraceHash(), settings, checker);
  scheduler.runUntil(5_000, () => world.leader() !== undefined);
  scheduler.runUntil(scheduler.nowMs + 200);
  assert.ok(world.leader() !== undefined, 'no leader in 5 s');
  return world;
}

/** Starts a call and runs virtual time until it answers (within 10 s). */
function answer<T>(world: LeaseWorld, start: (done: (a: SimAnswer<T>) => void) => void):
  SimAnswer<T> {
  let result: SimAnswer<T> | undefined;
  let calls = 0;
  start((a) => {
    calls++;
    result = a;
  });
  world.scheduler.runUntil(world.scheduler.nowMs + 10_000, () => result !== undefined);
  world.scheduler.runUntil(world.scheduler.nowMs + 100);
  assert.equal(calls, 1, 'answered exactly once');
  return result!;
}

function ok<T>(a: SimAnswer<T>): T {
  assert.equal(a.kind, 'ok', JSON.stringify(a));
  return (a as { value: T }).value;
}

describe('sim: scenarios: lease: SimCoreClient', () => {
  test('grant, put with the lease, range, txn, revoke; a watch sees the revoke delete', () => {
    const world = quietWorld(1);
    const client = world.clients[0]!;
    const ttlMs = world.settings.ttlMsMin;
    const { leaseId } = ok(answer<Granted>(world, (done) => client.grant(ttlMs, done)));
    const put = ok(answer<KvPutResult>(world, (done) => client.put('svc/a', 'up', leaseId, done)));
    const read = ok(answer<KvRangeResult>(world, (done) => client.range({ key: 'svc/a' }, done)));
    assert.equal(read.kvs[0]?.lease, leaseId);
    const create = { compare: [{ key: 'lock', target: 'createRevision' as const,
      result: 'equal' as const, createRevision: 0 }], success: [{ kind: 'put' as const,
      key: 'lock', value: 'c1' }], failure: [] };
    const txn = (): KvTxnResult =>
      ok(answer<KvTxnResult>(world, (done) => client.txn(create, done)));
    assert.equal(txn().succeeded, true, 'the key was absent');
    assert.equal(txn().succeeded, false, 'the key exists now');
    let watched: SimAnswer<{ revision: number }> | undefined;
    world.clients[1]!.watchDelete('svc/a', put.revision + 1, (a) => {
      watched = a;
    }, { timeoutMs: 60_000 });
    world.scheduler.runUntil(world.scheduler.nowMs + 500);
    assert.equal(watched, undefined, 'no delete yet');
    const revoked = ok(answer<{ revision: number; deleted: number }>(world,
      (done) => client.revoke(leaseId, done)));
    assert.equal(revoked.deleted, 1);
    assert.deepEqual(watched, { kind: 'ok', value: { revision: revoked.revision },
      sentAtMs: (watched as { sentAtMs: number } | undefined)?.sentAtMs });
    const gone = answer(world, (done) => client.keepAlive(leaseId, done));
    assert.equal(gone.kind === 'failed' && gone.code, 'CONCLAVE_LEASE_EXPIRED');
  });

  test('after a leadership transfer, keep-alives follow the hint to the new leader', () => {
    const world = quietWorld(2);
    const client = world.clients[0]!;
    const ttlMs = world.settings.ttlMsMin;
    const { leaseId } = ok(answer<Granted>(world, (done) => client.grant(ttlMs, done)));
    const first = world.leader()!;
    assert.equal(client.leader, first.id);
    first.submit((p) => p.core.runtime.transferLeadership(undefined, () => undefined));
    world.scheduler.runUntil(world.scheduler.nowMs + 2_000,
      () => world.leader() !== undefined && world.leader() !== first);
    const second = world.leader()!;
    assert.notEqual(second.id, first.id);
    ok(answer(world, (done) => client.keepAlive(leaseId, done)));
    assert.equal(client.leader, second.id);
  });

  test('with every member down, a write ends unknown and a read failed', () => {
    const world = quietWorld(3);
    const client = world.clients[0]!;
    let write: SimAnswer<unknown> | undefined;
    let read: SimAnswer<unknown> | undefined;
    client.put('k', 'v', undefined, (a) => {
      write = a;
    });
    world.scheduler.runUntil(world.scheduler.nowMs + 0.05);
    for (const host of world.hosts.values()) host.crash();
    client.range({ key: 'k' }, (a) => {
      read = a;
    });
    world.scheduler.runUntil(world.scheduler.nowMs + 20_000);
    assert.equal(write?.kind, 'unknown', JSON.stringify(write));
    assert.equal(read?.kind, 'failed', JSON.stringify(read));
  });

  test('a holder\'s deadline moves with keep-alives; abandoned, it passes before the end', () => {
    const world = quietWorld(4);
    const client = world.clients[0]!;
    const ttlMs = world.settings.ttlMsMin;
    const keeper = new SimLeaseKeeper(client, { ttlMs, clockRateErrorMax: 0.01, marginMs: 100,
      retryDelayMsMax: 100 });
    const { leaseId } = ok(answer<Granted>(world, (done) => keeper.grant(done)));
    const grantedDeadlineMs = keeper.deadlineMs;
    world.scheduler.runUntil(world.scheduler.nowMs + 3 * ttlMs);
    assert.ok(keeper.holds());
    assert.ok(keeper.keepAlivesAcked >= 7, `${keeper.keepAlivesAcked} keep-alives`);
    assert.ok(keeper.deadlineMs > grantedDeadlineMs + 2 * ttlMs);
    keeper.abandon();
    const leader = world.leader()!;
    world.scheduler.runUntil(world.scheduler.nowMs + 3 * ttlMs,
      () => leader.process?.core.store.lease(leaseId) === undefined);
    assert.equal(leader.process?.core.store.lease(leaseId), undefined, 'the lease never ended');
    assert.equal(keeper.holds(), false, 'the holder still counted on an ended lease');
  });
});
