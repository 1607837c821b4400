/**
 * client: kv — the key-value calls, leader discovery, retries and outcomes.
 * Method: a fake cluster (test/client/fake-cluster.ts: the real HTTP API and a real KvStore on
 * loopback) with faults injected per request; the client is the real one. Timeouts on paths
 * that must succeed are sized for a loaded machine (test/support/deadlines.ts): a request
 * timeout that fires on a healthy request fails the test. Nothing sleeps.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { connect, type ConclaveClient, type ConnectOptions } from '../../src/client/index.js';
import { CoordError } from '../../src/errors.js';
import { FakeCluster } from './fake-cluster.js';
import { until, rejection } from '../support/conditions.js';
import { deadlineMs, patienceMs } from '../support/deadlines.js';
import { TRANSPORT } from './transport-under-test.js';

const FAST: Omit<ConnectOptions, 'endpoints'> = {
  requestTimeoutMs: patienceMs(300), retryDeadlineMs: deadlineMs(800), backoffMsMin: 1,
  backoffMsMax: 20,
};

let cluster: FakeCluster;
const clients: ConclaveClient[] = [];

function client(endpoints: string[], options: Partial<ConnectOptions> = {}): ConclaveClient {
  const c = connect({ ...FAST, transport: TRANSPORT, ...options, endpoints });
  clients.push(c);
  return c;
}

/** A fresh cluster per suite, put back in order after each test whatever the test did. */
function useCluster(): void {
  before(async () => {
    cluster = await FakeCluster.start({ nodes: 3 });
  });
  after(async () => {
    await cluster.stop();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    if (cluster.leaderId !== 'n1') cluster.elect('n1');
    cluster.leaderKnown = true;
    for (const node of cluster.nodes) {
      node.faults.length = 0;
      node.coreFaults.length = 0;
      node.requests.length = 0;
      await node.up();
    }
  });
}

describe('client: kv', () => {
  useCluster();

  test('put, get, range, delete and txn round-trip with etcd semantics', async () => {
    const c = client(cluster.endpoints);
    const put = await c.kv.put('rt/a', '1');
    assert.equal(put.kind, 'put');
    const again = await c.kv.put('rt/a', '2', { prevKv: true });
    assert.equal(again.prevKv?.value, '1');
    assert.equal(again.revision, put.revision + 1);
    await c.kv.put('rt/b', '3');
    const got = await c.kv.get('rt/a');
    assert.equal(got.kv?.value, '2');
    assert.equal(got.kv?.version, 2);
    assert.equal((await c.kv.get('rt/none')).kv, undefined);
    const range = await c.kv.range('rt/', { limit: 1 });
    assert.deepEqual(range.kvs.map((kv) => kv.key), ['rt/a']);
    assert.equal(range.more, true);
    assert.equal(range.count, 2);
    const old = await c.kv.get('rt/a', { revision: put.revision });
    assert.equal(old.kv?.value, '1');
    const txn = await c.kv.txn({
      compare: [{ key: 'rt/a', target: 'value', result: 'equal', value: '2' }],
      success: [{ kind: 'put', key: 'rt/c', value: '4' },
        { kind: 'range', key: 'rt/', prefix: true }],
    });
    assert.equal(txn.succeeded, true);
    assert.equal(txn.responses.length, 2);
    const deleted = await c.kv.delete('rt/', { prefix: true, prevKv: true });
    assert.equal(deleted.deleted, 3);
    assert.deepEqual(deleted.prevKvs?.map((kv) => kv.key), ['rt/a', 'rt/b', 'rt/c']);
    assert.equal((await c.kv.range('rt/')).count, 0);
  });

  test('cas swaps only from the expected value and reports what it found', async () => {
    const c = client(cluster.endpoints);
    assert.equal((await c.kv.cas('cas/k', undefined, 'v1')).succeeded, true);
    const lost = await c.kv.cas('cas/k', undefined, 'v2');
    assert.equal(lost.succeeded, false);
    assert.equal(lost.current?.value, 'v1');
    assert.equal((await c.kv.cas('cas/k', 'v1', 'v2')).succeeded, true);
    const stale = await c.kv.cas('cas/k', 'v1', 'v3');
    assert.deepEqual([stale.succeeded, stale.current?.value], [false, 'v2']);
  });

  test('a serializable read is answered by a follower without the leader', async () => {
    const c = client([cluster.node('n2').endpoint]);
    await c.kv.put('ser/k', 'v');
    cluster.node('n1').requests.length = 0;
    const got = await c.kv.get('ser/k', { consistency: 'serializable' });
    assert.equal(got.kv?.value, 'v');
    // The put was redirected to n1; the read went to n2 only.
    assert.deepEqual(cluster.node('n1').requests, []);
  });

  test('an invalid request fails at once with outcome failed and is not retried', async () => {
    const c = client(cluster.endpoints);
    const error = await rejection(c.kv.put('k'.repeat(5000), 'v'));
    assert.equal(error.code, 'CONCLAVE_REQUEST_INVALID');
    assert.equal(error.outcome, 'failed');
    const attempts = cluster.nodes.flatMap((n) => n.requests).filter((r) => r.includes('/put'));
    assert.equal(attempts.length, 1);
  });

  test('connect reports every bad option at once', () => {
    assert.throws(() => connect({ endpoints: ['no port', 'http://h:1/path'], requestTimeoutMs: 0,
      backoffMsMin: 50, backoffMsMax: 10, clientId: 'has space' }), (error: CoordError) => {
      assert.equal(error.code, 'CONCLAVE_CONFIG_INVALID');
      for (const field of ['endpoints[0]', 'endpoints[1]', 'requestTimeoutMs',
        'backoffMsMin,backoffMsMax', 'clientId']) {
        assert.match(error.message, new RegExp(field.replace(/[[\]]/g, '\\$&')));
      }
      return true;
    });
  });
});

describe('client: leader discovery', () => {
  useCluster();

  test('a write sent to a follower follows the redirect; the leader is remembered', async () => {
    const c = client([cluster.node('n2').endpoint, cluster.node('n3').endpoint]);
    await c.kv.put('ld/a', '1');
    assert.equal(c.leaderUrl, cluster.node('n1').url);
    const followerRequests = cluster.node('n2').requests.length;
    await c.kv.put('ld/b', '2');
    await c.kv.get('ld/b');
    assert.equal(cluster.node('n2').requests.length, followerRequests, 'sent to the leader');
  });

  test('when the leader dies the client finds the new one by itself', async () => {
    const c = client(cluster.endpoints);
    await c.kv.put('ld/x', '1');
    assert.equal(c.leaderUrl, cluster.node('n1').url);
    await cluster.node('n1').down();
    cluster.elect('n3');
    const put = await c.kv.put('ld/x', '2');
    assert.ok(put.revision > 0);
    assert.equal(c.leaderUrl, cluster.node('n3').url);
  });

  test('followers that know no leader make it retry until one is elected', async () => {
    const c = client(cluster.endpoints, { retryDeadlineMs: 5000 });
    cluster.elect(undefined);
    cluster.leaderKnown = false;
    const pending = c.kv.put('ld/wait', 'v');
    await until(() => cluster.nodes.filter((n) => n.requests.some((r) => r.includes('/put')))
      .length >= 2);
    cluster.elect('n2');
    cluster.leaderKnown = true;
    const put = await pending;
    assert.ok(put.revision > 0);
    assert.equal((await c.kv.get('ld/wait')).kv?.value, 'v');
  });
});

describe('client: outcomes and retries', () => {
  useCluster();

  /** Every apply of the put of `key`'s idempotency key, retries included. */
  function appliesOf(clientId: string): string[] {
    return cluster.applied.filter((a) => a.startsWith(`${clientId}.`));
  }

  test('an answer lost after applying: retried with the same key, applied once', async () => {
    const c = client(cluster.endpoints);
    const before = cluster.store.revision;
    cluster.node('n1').faults.push({ path: '/v1/kv/put', action: 'drop-response' });
    const put = await c.kv.put('out/drop', 'v');
    assert.equal(put.revision, before + 1);
    assert.equal(cluster.store.get('out/drop')?.version, 1, 'applied once');
    const applies = appliesOf(c.clientId);
    assert.equal(applies.length, 2, 'the retry reached the store');
    assert.equal(applies[0], applies[1], 'with the same clientId and sequence');
  });

  test('an answer that never comes: retried with the same key, applied once', async () => {
    const c = client(cluster.endpoints, { requestTimeoutMs: patienceMs(100) });
    cluster.node('n1').faults.push({ path: '/v1/kv/put', action: 'hang' });
    await c.kv.put('out/hang', 'v');
    assert.equal(cluster.store.get('out/hang')?.version, 1);
    const applies = appliesOf(c.clientId);
    assert.deepEqual(applies, [applies[0], applies[0]]);
  });

  test('a 504 with outcome unknown is retried with the same key and applied once', async () => {
    const c = client(cluster.endpoints);
    cluster.node('n1').coreFaults.push('unknown-after-apply');
    await c.kv.put('out/504', 'v');
    assert.equal(cluster.store.get('out/504')?.version, 1);
    assert.equal(new Set(appliesOf(c.clientId)).size, 1);
  });

  test('no leader anywhere: NO_QUORUM with outcome failed, within the retry deadline', async () => {
    const c = client(cluster.endpoints, { retryDeadlineMs: 300 });
    cluster.elect(undefined);
    cluster.leaderKnown = false;
    const start = performance.now();
    const error = await rejection(c.kv.put('out/nq', 'v'));
    const elapsedMs = performance.now() - start;
    assert.equal(error.code, 'CONCLAVE_NO_QUORUM');
    assert.equal(error.outcome, 'failed');
    assert.match(error.message, /gave up after \d+ attempts/);
    const boundMs = 300 + FAST.requestTimeoutMs!;
    assert.ok(elapsedMs < boundMs, `took ${elapsedMs} ms (deadline 300 + one attempt: ${boundMs})`);
  });

  test('what a member said is reported over refused connections to the others', async () => {
    const c = client(cluster.endpoints, { retryDeadlineMs: 200 });
    cluster.elect(undefined);
    cluster.leaderKnown = false;
    await cluster.node('n2').down();
    await cluster.node('n3').down();
    const error = await rejection(c.kv.put('out/nq2', 'v'));
    assert.equal(error.code, 'CONCLAVE_NO_QUORUM');
    assert.equal(error.outcome, 'failed');
  });

  test('every endpoint refusing connections: UNAVAILABLE with outcome failed', async () => {
    // A cluster of its own: no pooled connection to its ports can make an attempt ambiguous.
    const gone = await FakeCluster.start({ nodes: 2 });
    await gone.stop();
    const c = client(gone.endpoints, { retryDeadlineMs: 200 });
    const error = await rejection(c.kv.put('out/down', 'v'));
    assert.equal(error.code, 'CONCLAVE_UNAVAILABLE');
    assert.equal(error.outcome, 'failed');
    assert.match(error.message, /ECONNREFUSED/);
  });

  test('a timed-out attempt makes the final failure unknown, whatever came after', async () => {
    // The attempt times out long after this test has seen it arrive and taken the leader away
    // (timers of one event loop fire in order), so the retry meets no leader.
    const c = client([cluster.node('n1').endpoint],
      { requestTimeoutMs: patienceMs(100), retryDeadlineMs: 2 * patienceMs(100) });
    cluster.node('n1').faults.push({ path: '/v1/kv/put', action: 'hang' });
    const pending = rejection(c.kv.put('out/unk', 'v'));
    await until(() => cluster.node('n1').requests.some((r) => r.includes('/put')));
    cluster.elect(undefined);
    cluster.leaderKnown = false;
    const error = await pending;
    assert.equal(error.code, 'CONCLAVE_NO_QUORUM');
    assert.equal(error.outcome, 'unknown');
    assert.match(error.message, /earlier attempt may have been applied/);
  });

  test('reads are retried too and a linearizable read goes through the leader', async () => {
    const c = client(cluster.endpoints);
    await c.kv.put('out/read', 'v');
    cluster.node('n1').faults.push({ path: '/v1/kv/range', action: 'drop-response' });
    assert.equal((await c.kv.get('out/read')).kv?.value, 'v');
    const reads = cluster.node('n1').requests.filter((r) => r.includes('/v1/kv/range'));
    assert.equal(reads.length, 2, 'the lost read and its retry, both on the leader');
  });

  test('close() rejects calls in flight and later calls', async () => {
    const c = client(cluster.endpoints, { requestTimeoutMs: 5000 });
    cluster.node('n1').faults.push({ path: '/v1/kv/put', action: 'hang' });
    const pending = rejection(c.kv.put('out/close', 'v'));
    await until(() => cluster.node('n1').requests.some((r) => r.includes('/put')));
    c.close();
    const error = await pending;
    assert.equal(error.code, 'CONCLAVE_UNAVAILABLE');
    assert.equal(error.outcome, 'unknown');
    assert.equal((await rejection(c.kv.get('out/close'))).code, 'CONCLAVE_UNAVAILABLE');
  });
});

describe('client: concurrency', () => {
  test('concurrent writes use writesInflightMax ids at most, one in flight each', async () => {
    const slow = await FakeCluster.start({ nodes: 1, applyDelayMs: 2 });
    const c = connect({ ...FAST, transport: TRANSPORT, endpoints: slow.endpoints, writesInflightMax: 4 });
    try {
      const results = await Promise.all(Array.from({ length: 40 },
        (_, i) => c.kv.put(`con/${i}`, String(i))));
      assert.equal(new Set(results.map((r) => r.revision)).size, 40);
      assert.deepEqual(slow.inflightViolations, []);
      const ids = new Set(slow.applied.map((a) => a.split('#')[0]));
      assert.equal(ids.size, 4);
      assert.equal(slow.store.keyCount, 40);
    } finally {
      c.close();
      await slow.stop();
    }
  });
});
