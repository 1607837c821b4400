/**
 * client: signal — every call takes a `signal` that ends it at once: an AbortError (a
 * CoordError, `cause` the signal's reason) whose outcome is `failed` when no request had left
 * (aborted before the call, while waiting for a lane, while no member could be reached) and
 * `unknown` when one may have reached a member; a leadership's signal passed to its writes
 * stops them the moment the leadership is lost, instead of retrying for `retryDeadlineMs`.
 * Method: the fake clusters of the other client tests (the real HTTP API on loopback) with
 * faults; the client is the real one; every wait is a condition with a deadline.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  connect, LeadershipLostError, type ConclaveClient, type ConnectOptions,
} from '../../src/client/index.js';
import { FakeCluster } from './fake-cluster.js';
import { LeaseFakeCluster } from './lease-fake-cluster.js';
import { rejection, until } from '../support/conditions.js';
import { TRANSPORT } from './transport-under-test.js';

const FAST: Omit<ConnectOptions, 'endpoints'> = {
  requestTimeoutMs: 30_000, retryDeadlineMs: 60_000, backoffMsMin: 1, backoffMsMax: 20,
};

const clients: ConclaveClient[] = [];

function client(endpoints: string[], options: Partial<ConnectOptions> = {}): ConclaveClient {
  const c = connect({ ...FAST, transport: TRANSPORT, ...options, endpoints });
  clients.push(c);
  return c;
}

describe('client: signal', () => {
  let cluster: FakeCluster;
  before(async () => {
    cluster = await FakeCluster.start({ nodes: 3 });
  });
  after(async () => {
    await cluster.stop();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const node of cluster.nodes) {
      node.faults.length = 0;
      node.requests.length = 0;
      await node.up();
    }
  });

  test('aborted before the call: AbortError, failed, nothing sent', async () => {
    const c = client(cluster.endpoints);
    const reason = new Error('changed my mind');
    const error = await rejection(c.kv.put('sig/a', 'v', { signal: AbortSignal.abort(reason) }));
    assert.equal(error.name, 'AbortError');
    assert.equal(error.code, 'CONCLAVE_UNAVAILABLE');
    assert.equal(error.outcome, 'failed');
    assert.equal(error.cause, reason);
    assert.deepEqual(cluster.nodes.flatMap((n) => n.requests), []);
    for (const call of [c.kv.get('sig/a', { signal: AbortSignal.abort() }),
      c.kv.range('sig/', { signal: AbortSignal.abort() }),
      c.kv.txn({ compare: [], success: [] }, { signal: AbortSignal.abort() }),
      c.kv.delete('sig/a', { signal: AbortSignal.abort() }),
      c.leases.list({ signal: AbortSignal.abort() }),
      c.grantLease({ ttlMs: 10_000, signal: AbortSignal.abort() }),
      c.status({ signal: AbortSignal.abort() })]) {
      const e = await rejection(call);
      assert.equal(e.name, 'AbortError');
      assert.equal(e.outcome, 'failed');
    }
  });

  test('aborted while the write waits for its answer: at once, outcome unknown', async () => {
    const c = client(cluster.endpoints);
    cluster.node('n1').faults.push({ path: '/v1/kv/put', action: 'hang' });
    const controller = new AbortController();
    const pending = rejection(c.kv.put('sig/b', 'v', { signal: controller.signal }));
    await until(() => cluster.node('n1').requests.some((r) => r.includes('/v1/kv/put')));
    const abortedAtMs = performance.now();
    controller.abort(new Error('leadership lost'));
    const error = await pending;
    assert.ok(performance.now() - abortedAtMs < 5000, 'not at once');
    assert.equal(error.name, 'AbortError');
    assert.equal(error.outcome, 'unknown');
    assert.match(error.message, /leadership lost.*may have been applied/);
  });

  test('aborted while no member can be reached: at once, outcome failed', async () => {
    for (const node of cluster.nodes) await node.down();
    const c = client(cluster.endpoints);
    const controller = new AbortController();
    const pending = rejection(c.kv.put('sig/c', 'v', { signal: controller.signal }));
    // Whenever the abort comes (between refused attempts or during one), nothing was sent.
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    const error = await pending;
    assert.equal(error.name, 'AbortError');
    assert.equal(error.outcome, 'failed', error.message);
  });

  test('aborted while waiting for a lane: failed, and the lane goes on to the next', async () => {
    const c = client(cluster.endpoints, { writesInflightMax: 1 });
    cluster.node('n1').faults.push({ path: '/v1/kv/put', action: 'hang' });
    const first = new AbortController();
    const hanging = rejection(c.kv.put('sig/d', '1', { signal: first.signal }));
    await until(() => cluster.node('n1').requests.some((r) => r.includes('/v1/kv/put')));
    const second = new AbortController();
    const waiting = rejection(c.kv.put('sig/d', '2', { signal: second.signal }));
    second.abort();
    const error = await waiting;
    assert.equal(error.outcome, 'failed');
    assert.equal(cluster.node('n1').requests.filter((r) => r.includes('/v1/kv/put')).length, 1);
    first.abort();
    assert.equal((await hanging).outcome, 'unknown');
    const third = await c.kv.put('sig/d', '3'); // the lane is free again
    assert.equal(third.kind, 'put');
  });
});

describe('client: signal: a leadership lost stops its writes', () => {
  let cluster: LeaseFakeCluster;
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
  });
  after(async () => {
    await cluster.stop();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  test('a write retrying with no leader stops when the leadership is lost, not after 60 s',
    async () => {
      const c = client(cluster.endpoints, { requestTimeoutMs: 1000, leaseMarginMs: 100 });
      const leadership = await c.election('sig').campaign('a', { ttlMs: 1500 });
      // The cluster loses its leader: writes retry (NO_QUORUM), keep-alives go unanswered.
      cluster.leaderId = undefined;
      for (const node of cluster.nodes) node.streams.closeAll('no leader');
      const write = rejection(c.kv.put('sig/fenced', 'v', { signal: leadership.signal }));
      await until(() => leadership.signal.aborted, 20_000);
      const lostAtMs = performance.now();
      const error = await write;
      assert.ok(performance.now() - lostAtMs < 5000, 'the write went on retrying');
      assert.equal(error.name, 'AbortError');
      assert.ok(error.cause instanceof LeadershipLostError, String(error.cause));
      // `unknown` when the abort caught an attempt on its way; never applied either way.
      assert.ok(['failed', 'unknown'].includes(error.outcome), String(error.outcome));
      assert.equal(cluster.store.get('sig/fenced'), undefined, 'a member applied it');
      cluster.elect('n1');
    });
});
