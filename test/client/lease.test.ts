/**
 * client: leases — grant, background keep-alives over the pipelined stream, revoke,
 * time-to-live, list, keys that die with their lease, and the local deadline: `lease.signal`
 * aborts before the server ends the lease when keep-alives stop being answered, and survives a
 * leader change when they resume in time. Method: the lease fake cluster (lease-fake-cluster.ts:
 * real HTTP API, real keep-alive stream and a real LeaseTracker on loopback) with TTLs of a few
 * seconds; waits are conditions with deadlines, never sleeps on a guess. Timeouts and margins on
 * paths that must succeed are sized for a loaded machine (test/support/deadlines.ts).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { connect, type ConclaveClient, type ConnectOptions } from '../../src/client/index.js';
import { leaseTtlMsMin } from '../../src/core/kv/index.js';
import { CoordError } from '../../src/errors.js';
import { FAKE_TIMING, LeaseFakeCluster } from './lease-fake-cluster.js';
import { until, rejection } from '../support/conditions.js';
import { deadlineMs, patienceMs } from '../support/deadlines.js';
import { TRANSPORT } from './transport-under-test.js';

// A 1 s margin (the stall watch's threshold): above a loaded machine's event-loop lag.
const FAST: Omit<ConnectOptions, 'endpoints'> = {
  requestTimeoutMs: patienceMs(300), retryDeadlineMs: deadlineMs(1000), backoffMsMin: 1,
  backoffMsMax: 20, leaseMarginMs: 1000,
};
// 4.5 s: keep-alives every 1.5 s, the local deadline 3.4 s after one: timers may run 1.9 s
// late on a loaded machine before a kept-alive lease is at risk.
const TTL_MS = 4500;

let cluster: LeaseFakeCluster;
const clients: ConclaveClient[] = [];

function client(options: Partial<ConnectOptions> = {}): ConclaveClient {
  const c = connect({ ...FAST, transport: TRANSPORT, ...options, endpoints: cluster.endpoints });
  clients.push(c);
  return c;
}

describe('client: leases', () => {
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
  });
  after(async () => {
    await cluster.stop();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    cluster.dropKeepAlives = false;
    if (cluster.leaderId !== 'n1') cluster.elect('n1');
  });

  test('a kept-alive lease holds its key for many TTLs; revoke deletes it and aborts', async () => {
    const c = client();
    const lease = await c.grantLease({ ttlMs: TTL_MS });
    assert.equal(lease.ttlMs, TTL_MS);
    await c.kv.put('svc/a', 'up', { lease: lease.id });
    const seen = cluster.keepAlivesSeen;
    // Over two TTLs of keep-alives.
    await until(() => cluster.keepAlivesSeen >= seen + 7, deadlineMs(7 * TTL_MS / 3));
    assert.equal(lease.signal.aborted, false);
    assert.equal((await c.kv.get('svc/a')).kv?.lease, lease.id);
    assert.deepEqual(await lease.revoke(), { revision: cluster.store.revision, deleted: 1 });
    assert.equal(lease.signal.aborted, true);
    assert.equal((lease.signal.reason as CoordError).code, 'CONCLAVE_LEASE_EXPIRED');
    assert.equal((await c.kv.get('svc/a')).kv, undefined);
  });

  test('without keep-alives the signal aborts before the server ends the lease', async () => {
    const c = client();
    const lease = await c.grantLease({ ttlMs: TTL_MS, autoKeepAlive: false });
    await c.kv.put('svc/b', 'up', { lease: lease.id });
    let abortedAtMs = 0;
    lease.signal.addEventListener('abort', () => {
      abortedAtMs = performance.now();
    });
    await until(() => cluster.store.get('svc/b') === undefined);
    const endedAtMs = performance.now();
    assert.ok(abortedAtMs > 0 && abortedAtMs < endedAtMs,
      `signal aborted ${endedAtMs - abortedAtMs} ms before the server ended the lease`);
    assert.match((lease.signal.reason as CoordError).message, /local deadline passed/);
  });

  test('unanswered keep-alives leave the deadline where it was: abort comes first', async () => {
    const c = client();
    const lease = await c.grantLease({ ttlMs: TTL_MS });
    const seen = cluster.keepAlivesSeen;
    await until(() => cluster.keepAlivesSeen > seen);
    const deadlineMs = lease.expiresAtMs;
    cluster.dropKeepAlives = true;
    await until(() => lease.signal.aborted);
    assert.ok(performance.now() >= deadlineMs - 1);
    assert.ok(cluster.store.lease(lease.id) !== undefined, 'server ended it before the abort');
    await until(() => cluster.store.lease(lease.id) === undefined);
  });

  test('keep-alives follow a leader change; the lease survives it', async () => {
    const c = client();
    const lease = await c.grantLease({ ttlMs: TTL_MS });
    await c.kv.put('svc/c', 'up', { lease: lease.id });
    const seen = cluster.keepAlivesSeen;
    await until(() => cluster.keepAlivesSeen > seen);
    cluster.elect('n2');
    const after = cluster.keepAlivesSeen;
    await until(() => cluster.keepAlivesSeen >= after + 4);
    assert.equal(lease.signal.aborted, false);
    assert.equal(c.leaderUrl, cluster.nodes[1]?.url);
    assert.equal(cluster.store.get('svc/c')?.lease, lease.id);
  });

  test('a keep-alive of an ended lease rejects LEASE_EXPIRED and aborts the signal', async () => {
    const c = client();
    const lease = await c.grantLease({ ttlMs: TTL_MS, autoKeepAlive: false });
    await c.leases.revoke(lease.id);
    const error = await rejection(lease.keepAlive());
    assert.equal(error.code, 'CONCLAVE_LEASE_EXPIRED');
    assert.equal(lease.signal.aborted, true);
    assert.equal((await rejection(c.leases.keepAliveOnce(lease.id))).code,
      'CONCLAVE_LEASE_EXPIRED');
    assert.equal((await rejection(c.kv.put('x', 'y', { lease: lease.id }))).code,
      'CONCLAVE_LEASE_EXPIRED');
  });

  test('time-to-live, keep-alive once and list answer from the leader, via any member', async () => {
    const c = connect({ ...FAST, transport: TRANSPORT, endpoints: [cluster.nodes[2]?.endpoint ?? ''] });
    clients.push(c);
    const lease = await c.grantLease({ ttlMs: TTL_MS, autoKeepAlive: false });
    await c.kv.put('svc/d', '1', { lease: lease.id });
    const once = await c.leases.keepAliveOnce(lease.id);
    assert.equal(once.leaseId, lease.id);
    // Renewed by this keep-alive: nearly the whole TTL (loaded machines take their time).
    assert.ok(once.remainingMs > TTL_MS / 2 && once.remainingMs <= TTL_MS,
      `${once.remainingMs} ms left of ${TTL_MS}`);
    const ttl = await lease.timeToLive({ keys: true });
    assert.deepEqual([ttl.leaseId, ttl.ttlMs, ttl.keys], [lease.id, TTL_MS, ['svc/d']]);
    const listed = await c.leases.list();
    assert.ok(listed.some((l) => l.leaseId === lease.id && l.keyCount === 1));
    await lease.revoke();
  });

  test('a TTL below the servers minimum is refused with the minimum in the message', async () => {
    const c = client();
    const minMs = leaseTtlMsMin(FAKE_TIMING);
    const error = await rejection(c.grantLease({ ttlMs: minMs - 1 }));
    assert.equal(error.code, 'CONCLAVE_REQUEST_INVALID');
    assert.match(error.message, new RegExp(`at least ${minMs} ms`));
  });

  test('closing the client aborts every lease it holds', async () => {
    const c = client();
    const lease = await c.grantLease({ ttlMs: TTL_MS });
    c.close();
    assert.equal(lease.signal.aborted, true);
    assert.equal((lease.signal.reason as CoordError).code, 'CONCLAVE_UNAVAILABLE');
  });
});
