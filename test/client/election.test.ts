/**
 * client: elections and locks — the driver of the Campaign machine against a cluster: ordered
 * handover by create revision with growing fencing tokens and terms one apart, each waiter
 * watching only its predecessor's key, a campaign whose lease ends while waiting, aborting a
 * campaign (its key goes), proclaim, leader(), observe(), lock/unlock/withLock, and a
 * leadership's signal aborting on a stall of the event loop and on its key being deleted.
 * Method: the lease fake cluster (lease-fake-cluster.ts: real HTTP API, watches, keep-alive
 * stream and LeaseTracker on loopback) with TTLs of a second or two; every wait is a condition
 * with a deadline; the stall is a real busy loop on this event loop.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  connect, HoldingReleasedError, LeadershipLostError, type ConclaveClient, type ConnectOptions, type ElectionLeader,
} from '../../src/client/index.js';
import { candidateKey, recipeKeys } from '../../src/core/election/index.js';
import { CoordError } from '../../src/errors.js';
import { LeaseFakeCluster } from './lease-fake-cluster.js';
import { until, rejection } from '../support/conditions.js';
import { deadlineMs, patienceMs } from '../support/deadlines.js';
import { TRANSPORT } from './transport-under-test.js';

// A 600 ms margin: the stall watch's threshold. Above the event-loop lag of a loaded shared
// test machine (timers 300+ ms late were seen at load 13 on 2 cores), below the busy loop the
// stall test runs.
// Request timeouts and TTLs sized for a loaded machine (test/support/deadlines.ts): with 6 s,
// keep-alives go every 2 s and the local deadline is 5.3 s after one.
const FAST: Omit<ConnectOptions, 'endpoints'> = {
  requestTimeoutMs: patienceMs(250), retryDeadlineMs: deadlineMs(2000), backoffMsMin: 1,
  backoffMsMax: 20, leaseMarginMs: 600,
};
const TTL_MS = 6000;

let cluster: LeaseFakeCluster;
const clients: ConclaveClient[] = [];

function client(): ConclaveClient {
  const c = connect({ ...FAST, transport: TRANSPORT, endpoints: cluster.endpoints });
  clients.push(c);
  return c;
}

/** Tracks whether a promise settled, without awaiting it. */
function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  promise.then(() => { done = true; }, () => { done = true; });
  return () => done;
}

function candidates(kind: 'election' | 'lock', name: string): string[] {
  const prefix = recipeKeys(kind, name).candidatePrefix;
  const result = cluster.store.range({ key: prefix, prefix: true });
  assert.equal(result.kind, 'range');
  return result.kind === 'range' ? result.kvs.map((kv) => kv.key) : [];
}

describe('client: election', () => {
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
  });
  after(async () => {
    await cluster.stop();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  test('ordered handover: the next by create revision wins, the third waits; tokens and terms grow',
    async () => {
      const election = (): ReturnType<ConclaveClient['election']> => client().election('handover');
      const a = await election().campaign('a', { ttlMs: TTL_MS, value: 'va' });
      assert.equal(a.held(), true);
      assert.ok(a.remainingMs > 0 && a.remainingMs <= TTL_MS, String(a.remainingMs));
      const pendingB = election().campaign('b', { ttlMs: TTL_MS });
      await until(() => candidates('election', 'handover').length === 2);
      const pendingC = election().campaign('c', { ttlMs: TTL_MS });
      await until(() => candidates('election', 'handover').length === 3);
      const cDone = settled(pendingC);
      const bDone = settled(pendingB);
      await a.resign();
      assert.equal(a.signal.aborted, true);
      const released = a.signal.reason as HoldingReleasedError;
      assert.ok(released instanceof HoldingReleasedError, String(released));
      assert.equal(released.lossReason, 'released');
      assert.equal(released.code, 'CONCLAVE_RELEASED', 'a release is not an expiry');
      assert.equal(released.name, 'AbortError');
      assert.equal(a.held(), false);
      assert.equal(a.remainingMs, 0);
      const b = await pendingB;
      assert.ok(b.fencingToken > a.fencingToken, `${b.fencingToken} > ${a.fencingToken}`);
      assert.equal(b.term, a.term + 1);
      assert.deepEqual(await election().leader(), { id: 'b', value: '',
        fencingToken: b.fencingToken, key: b.key });
      assert.equal(cDone(), false, 'the third candidate must still wait');
      await b.resign();
      const c = await pendingC;
      assert.ok(bDone());
      assert.ok(c.fencingToken > b.fencingToken);
      assert.equal(c.term, b.term + 1);
      await c.resign();
      assert.deepEqual(candidates('election', 'handover'), []);
    });

  test('a waiter watches only its predecessor\'s key; aborting it hands the watch on', async () => {
    const keys = recipeKeys('election', 'chain');
    const a = await client().election('chain').campaign('a', { ttlMs: TTL_MS });
    const abortB = new AbortController();
    const pendingB = client().election('chain').campaign('b', { ttlMs: TTL_MS,
      signal: abortB.signal });
    await until(() => candidates('election', 'chain').length === 2);
    const pendingC = client().election('chain').campaign('c', { ttlMs: TTL_MS });
    await until(() => candidates('election', 'chain').length === 3);
    const [, keyB, keyC] = candidates('election', 'chain');
    const watched = (key: string): boolean => cluster.requests.some((r) =>
      r.startsWith('GET /v1/watch?') && new URLSearchParams(r.split('?')[1]).get('key') === key);
    await until(() => watched(a.key) && watched(keyB ?? ''));
    assert.equal(watched(keyC ?? ''), false, 'nobody waits on the last candidate');
    const prefixWatches = cluster.requests.filter((r) => r.includes(
      `key=${encodeURIComponent(keys.candidatePrefix)}&`));
    assert.deepEqual(prefixWatches, [], 'no waiter watches the whole prefix (no herd)');
    abortB.abort();
    const aborted = await rejection(pendingB);
    assert.equal(aborted.name, 'AbortError');
    assert.deepEqual(candidates('election', 'chain'), [a.key, keyC], 'b\'s key is gone');
    const cDone = settled(pendingC);
    await a.resign();
    const c = await pendingC;
    assert.ok(cDone());
    assert.equal(c.key, keyC);
    assert.equal(c.term, a.term + 1);
    await c.resign();
  });

  test('a campaign whose lease ends while waiting rejects with CONCLAVE_LEASE_EXPIRED',
    async () => {
      const holder = await client().election('expiring').campaign('a', { ttlMs: TTL_MS });
      const c = client();
      const lease = await c.grantLease({ ttlMs: TTL_MS, autoKeepAlive: false });
      const error = await rejection(c.election('expiring').campaign('b', { lease }));
      assert.equal(error.code, 'CONCLAVE_LEASE_EXPIRED');
      assert.ok(error instanceof LeadershipLostError);
      assert.equal(error.lossReason, 'lease-ended');
      assert.deepEqual(candidates('election', 'expiring'), [holder.key], 'its key was deleted');
      assert.equal(holder.signal.aborted, false);
      await holder.resign();
    });

  test('under a lease of its own: resign deletes only the key; ttlMs with lease is usage',
    async () => {
      const c = client();
      const lease = await c.grantLease({ ttlMs: TTL_MS });
      await assert.rejects(c.election('own').campaign('a', { lease, ttlMs: TTL_MS }),
        (e: CoordError) => e.code === 'CONCLAVE_USAGE');
      const leadership = await c.election('own').campaign('a', { lease });
      assert.equal(leadership.leaseId, lease.id);
      await leadership.resign();
      assert.deepEqual(candidates('election', 'own'), []);
      assert.equal(lease.signal.aborted, false, 'the caller\'s lease lives on');
      assert.ok(cluster.store.leases().some((l) => l.id === lease.id));
      await lease.revoke();
    });

  test('a TTL below the servers\' minimum is refused, naming the minimum; bad names are usage',
    async () => {
      const c = client();
      const error = await rejection(c.election('short').campaign('a', { ttlMs: 50 }));
      assert.equal(error.code, 'CONCLAVE_REQUEST_INVALID');
      assert.match(error.message, /at least \d+ ms/);
      assert.throws(() => c.election('a/b'), (e: CoordError) => e.code === 'CONCLAVE_USAGE');
      assert.equal((await rejection(c.lock(''))).code, 'CONCLAVE_USAGE');
    });

  test('proclaim changes the value leader() shows; a deleted key ends the leadership', async () => {
    const c = client();
    const election = c.election('proclaim');
    assert.equal(await election.leader(), undefined);
    const leadership = await election.campaign('a', { ttlMs: TTL_MS, value: 'http://a:8080' });
    assert.deepEqual(await election.leader(), { id: 'a', value: 'http://a:8080',
      fencingToken: leadership.fencingToken, key: leadership.key });
    await leadership.proclaim('http://a:9090');
    assert.equal(leadership.value, 'http://a:9090');
    const shown = await election.leader();
    assert.equal(shown?.value, 'http://a:9090');
    assert.equal(shown?.fencingToken, leadership.fencingToken, 'proclaim keeps the token');
    assert.equal((await c.kv.get(leadership.key)).kv?.lease, leadership.leaseId);
    await c.kv.delete(leadership.key);
    await until(() => leadership.signal.aborted);
    assert.equal((leadership.signal.reason as LeadershipLostError).lossReason, 'key-deleted');
    assert.equal((await rejection(leadership.proclaim('late'))).code, 'CONCLAVE_LEASE_EXPIRED');
  });

  test('observe() yields the leader now, then each change, until its signal aborts', async () => {
    const c = client();
    const stop = new AbortController();
    const seen: (ElectionLeader | undefined)[] = [];
    const observing = (async () => {
      for await (const leader of c.election('observed').observe({ signal: stop.signal })) {
        seen.push(leader);
      }
    })();
    await until(() => seen.length === 1);
    assert.equal(seen[0], undefined);
    const a = await client().election('observed').campaign('a', { ttlMs: TTL_MS, value: '1' });
    await until(() => seen.length === 2);
    await a.proclaim('2');
    await until(() => seen.length === 3);
    const pendingB = client().election('observed').campaign('b', { ttlMs: TTL_MS, value: 'x' });
    await until(() => candidates('election', 'observed').length === 2);
    await a.resign();
    const b = await pendingB;
    await until(() => seen.length === 4);
    stop.abort();
    await observing;
    const shown = (l: ElectionLeader | undefined): string =>
      l === undefined ? '-' : `${l.id}=${l.value}@${l.fencingToken}`;
    assert.deepEqual(seen.map(shown),
      ['-', `a=1@${a.fencingToken}`, `a=2@${a.fencingToken}`, `b=x@${b.fencingToken}`]);
    await b.resign();
  });

  test('a stall of the event loop longer than the margin aborts the leadership', async () => {
    const leader = await client().election('stall').campaign('a', { ttlMs: 4000 });
    const revokesBefore = cluster.requests.filter((r) => r === 'POST /v1/lease/revoke').length;
    // Busy, as under a long GC pause: no timer can run. 1500 ms > the 600 ms margin, yet inside
    // the lease (keep-alives every 1333 ms, local deadline 3320 ms after the last one), so only
    // the stall watch can end the leadership here.
    const end = performance.now() + 1500;
    while (performance.now() < end) { /* stall */ }
    await until(() => leader.signal.aborted);
    const reason = leader.signal.reason as LeadershipLostError;
    assert.equal(reason.lossReason, 'stalled');
    assert.match(reason.message, /stalled: a 100 ms timer fired \d+ ms late/);
    // Its lease is revoked after the loss, so the next candidate need not wait out the TTL.
    await until(() => cluster.requests.filter((r) => r === 'POST /v1/lease/revoke').length
      > revokesBefore);
    await until(() => candidates('election', 'stall').length === 0);
    const b = await client().election('stall').campaign('b', { ttlMs: 4000 });
    assert.ok(b.fencingToken > leader.fencingToken);
    assert.equal(b.term, leader.term + 1);
    await b.resign();
  });
});

describe('client: lock', () => {
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
  });
  after(async () => {
    await cluster.stop();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  test('lock and unlock: the next holder waits, then gets a larger token', async () => {
    const first = await client().lock('demo', { ttlMs: TTL_MS });
    assert.equal(first.term, 1);
    const pending = client().lock('demo', { ttlMs: TTL_MS, id: 'second' });
    await until(() => candidates('lock', 'demo').length === 2);
    const done = settled(pending);
    await client().kv.get('unrelated'); // a round trip: the waiter had time to act wrongly
    assert.equal(done(), false);
    await first.unlock();
    assert.equal(first.signal.aborted, true);
    const second = await pending;
    assert.ok(second.fencingToken > first.fencingToken);
    assert.equal(second.term, 2);
    assert.equal(second.id, 'second');
    await second.unlock();
    assert.deepEqual(candidates('lock', 'demo'), []);
  });

  test('withLock runs the function holding the lock and unlocks, also when it throws', async () => {
    const c = client();
    const token = await c.withLock('job', ({ fencingToken, signal, key }) => {
      assert.equal(signal.aborted, false);
      assert.deepEqual(candidates('lock', 'job'), [key]);
      return fencingToken;
    }, { ttlMs: TTL_MS });
    assert.ok(token > 0);
    assert.deepEqual(candidates('lock', 'job'), []);
    await assert.rejects(c.withLock('job', () => {
      throw new Error('boom');
    }, { ttlMs: TTL_MS }), /boom/);
    assert.deepEqual(candidates('lock', 'job'), []);
    const leases = cluster.store.leases().map((l) => l.id);
    const again = await c.lock('job', { ttlMs: TTL_MS });
    assert.ok(again.fencingToken > token);
    assert.equal(again.key, candidateKey(recipeKeys('lock', 'job'), again.leaseId));
    assert.ok(!leases.includes(again.leaseId), 'each lock has its own lease');
    await again.unlock();
    assert.equal(cluster.store.leases().some((l) => l.id === again.leaseId), false,
      'unlock revokes the lease it was granted');
  });
});
