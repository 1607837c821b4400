/**
 * client: status — the cluster's view merged from every member, and endpoint parsing.
 * Method: the fake cluster for live answers (one member down); mergeStatus on hand-made
 * answers with fields missing, since servers of other versions may leave any field out.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { connect, parseEndpoint, parseEndpointList } from '../../src/client/index.js';
import { mergeStatus } from '../../src/client/status.js';
import { CoordError } from '../../src/errors.js';
import { FakeCluster } from './fake-cluster.js';
import { patienceMs } from '../support/deadlines.js';
import { TRANSPORT } from './transport-under-test.js';

// Sized for a loaded machine (test/support/deadlines.ts).
const FAST = { requestTimeoutMs: patienceMs(500), retryDeadlineMs: patienceMs(500),
  backoffMsMin: 1, backoffMsMax: 10 };

describe('client: status', () => {
  test('names the leader, term and commit index, and each member\'s role and health', async () => {
    const fake = await FakeCluster.start({ nodes: 3 });
    const c = connect({ ...FAST, transport: TRANSPORT, endpoints: fake.endpoints });
    try {
      await c.kv.put('s/k', 'v');
      await fake.node('n3').down();
      const status = await c.status();
      assert.equal(status.leaderId, 'n1');
      assert.equal(status.leaderUrl, fake.node('n1').url);
      assert.equal(status.term, fake.term);
      assert.equal(status.commitIndex, 1);
      assert.equal(status.revision, fake.store.revision);
      assert.deepEqual(status.members.map((m) => [m.id, m.role, m.health]),
        [['n1', 'leader', 'up'], ['n2', 'follower', 'up'], ['n3', 'follower', 'down']]);
      assert.match(status.members[2]?.error ?? '', /ECONNREFUSED/);
      assert.equal(status.members[1]?.matchIndex, 1);
      assert.equal(status.endpoints.filter((e) => e.ok).length, 2);
    } finally {
      c.close();
      await fake.stop();
    }
  });

  test('asks members named by others but missing from the endpoint list', async () => {
    const fake = await FakeCluster.start({ nodes: 3 });
    const c = connect({ ...FAST, transport: TRANSPORT, endpoints: [fake.node('n2').endpoint] });
    try {
      const status = await c.status();
      assert.deepEqual(status.members.map((m) => m.health), ['up', 'up', 'up']);
      assert.equal(status.endpoints.length, 3);
    } finally {
      c.close();
      await fake.stop();
    }
  });

  test('no endpoint answering is CONCLAVE_UNAVAILABLE', async () => {
    const fake = await FakeCluster.start({ nodes: 2 });
    await fake.stop();
    const c = connect({ ...FAST, transport: TRANSPORT, endpoints: fake.endpoints });
    await assert.rejects(c.status(), (e: CoordError) => e.code === 'CONCLAVE_UNAVAILABLE');
    c.close();
  });

  test('merging answers with fields missing keeps what is known', () => {
    const status = mergeStatus([
      { url: 'http://a:1', body: { id: 'a', role: 'follower', leaderId: 'b', term: 4 } },
      { url: 'http://b:1', error: 'cannot reach' },
      { url: 'http://c:1', body: { id: 'c' } },
    ]);
    assert.equal(status.leaderId, 'b');
    assert.equal(status.term, 4);
    assert.equal(status.commitIndex, undefined);
    assert.deepEqual(status.members.map((m) => [m.id, m.health]),
      [['a', 'up'], ['b', 'unknown'], ['c', 'up']]);
  });
});

describe('client: endpoints', () => {
  test('host:port, URLs and IPv6 become base URLs; bad ones say why', () => {
    assert.deepEqual(parseEndpoint('127.0.0.1:2379'), { url: 'http://127.0.0.1:2379' });
    assert.deepEqual(parseEndpoint('http://db1:2379/'), { url: 'http://db1:2379' });
    assert.deepEqual(parseEndpoint('[::1]:2379'), { url: 'http://[::1]:2379' });
    assert.match((parseEndpoint('db1') as { problem: string }).problem, /port/);
    assert.match((parseEndpoint('ftp://x:1') as { problem: string }).problem, /scheme/);
    assert.match((parseEndpoint('h:1/v1') as { problem: string }).problem, /path/);
    assert.deepEqual(parseEndpointList(' a:1, a:1 ,b:2,'),
      { urls: ['http://a:1', 'http://b:2'] });
    assert.deepEqual(parseEndpointList('a:1,nope,:x'),
      { problems: ["'nope' names no port (host:port)",
        "':x' must be host:port or http://host:port"] });
  });
});
