/**
 * adapters: etcd connection — the v3 gRPC calls Conclave makes, against a real etcd: kv (put,
 * range, delete, txn), leases (grant, keep-alive stream, time-to-live, revoke), watch (stream
 * from a revision), token auth with a refresh after the token expires, failover to the next
 * endpoint, and the outcome of a call that never left.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EtcdCallError, EtcdConnection, type EtcdMessage } from '../../src/adapters/etcd/etcd-connection.js';
import { until } from '../support/conditions.js';
import { deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';
import { ensureEtcdInstalled, RealEtcd } from '../support/real-etcd.js';

const missing = ensureEtcdInstalled();
const bytes = (s: string): Buffer => Buffer.from(s);
const text = (value: unknown): string => (value as Buffer).toString();

describe('adapters: etcd connection', { skip: missing ?? false }, () => {
  let etcd: RealEtcd;
  let connection: EtcdConnection;
  before(async () => {
    // A 2 s token TTL, so the refresh is exercised within the test.
    etcd = await RealEtcd.start({ extraArgs: ['--auth-token-ttl', '2'] });
    connection = new EtcdConnection({ endpoints: etcd.endpoints });
    await waitFor(() => connection.call('status', {}, { timeoutMs: 1000 })
      .then(() => true, () => undefined), deadlineMs(PROCESS_START_MS_IDLE), 'etcd answering');
  });
  after(() => {
    connection?.close();
    etcd?.stop();
  });

  test('put, range, delete and txn round-trip with 64-bit fields as decimal strings', async () => {
    const put = await connection.call('put', { key: bytes('a'), value: bytes('1') });
    const revision = Number((put['header'] as EtcdMessage)['revision']);
    assert.ok(revision >= 2);
    const range = await connection.call('range', { key: bytes('a') });
    const kvs = range['kvs'] as EtcdMessage[];
    assert.equal(kvs.length, 1);
    assert.equal(text(kvs[0]!['value']), '1');
    assert.equal(kvs[0]!['mod_revision'], String(revision));
    const txn = await connection.call('txn', {
      compare: [{ key: bytes('a'), target: 'VALUE', result: 'EQUAL', value: bytes('1') }],
      success: [{ request_put: { key: bytes('a'), value: bytes('2'), prev_kv: true } }],
      failure: [{ request_range: { key: bytes('a') } }],
    });
    assert.equal(txn['succeeded'], true);
    const responses = txn['responses'] as EtcdMessage[];
    const prev = (responses[0]!['response_put'] as EtcdMessage)['prev_kv'] as EtcdMessage;
    assert.equal(text(prev['value']), '1');
    const deleted = await connection.call('deleteRange', { key: bytes('a') });
    assert.equal(deleted['deleted'], '1');
  });

  test('a lease is granted, kept alive over the stream, and revoked', async () => {
    const grant = await connection.call('leaseGrant', { TTL: 5 });
    const id = grant['ID'] as string;
    assert.match(id, /^\d+$/);
    await connection.call('put', { key: bytes('leased'), value: bytes('x'), lease: id });
    const stream = await connection.stream('leaseKeepAlive');
    const answers: EtcdMessage[] = [];
    stream.onMessage((answer) => answers.push(answer));
    stream.write({ ID: id });
    await until(() => answers.length > 0);
    assert.equal(answers[0]!['ID'], id);
    assert.equal(answers[0]!['TTL'], '5');
    stream.end();
    const ttl = await connection.call('leaseTimeToLive', { ID: id, keys: true });
    assert.deepEqual((ttl['keys'] as Buffer[]).map(text), ['leased']);
    await connection.call('leaseRevoke', { ID: id });
    const gone = await connection.call('range', { key: bytes('leased') });
    assert.equal((gone['kvs'] as EtcdMessage[]).length, 0);
  });

  test('a watch from a revision delivers the events after it, in order', async () => {
    const first = await connection.call('put', { key: bytes('w/1'), value: bytes('a') });
    const from = Number((first['header'] as EtcdMessage)['revision']);
    await connection.call('put', { key: bytes('w/2'), value: bytes('b') });
    const stream = await connection.stream('watch');
    const events: string[] = [];
    stream.onMessage((answer) => {
      for (const e of answer['events'] as EtcdMessage[]) events.push(text((e['kv'] as EtcdMessage)['key']));
    });
    stream.write({ create_request: { key: bytes('w/'), range_end: bytes('w0'), start_revision: from } });
    await until(() => events.length >= 2);
    assert.deepEqual(events, ['w/1', 'w/2']);
    stream.end();
  });

  test('a call to an endpoint that is down fails as never sent, and the next call fails over', async () => {
    const dead = new EtcdConnection({ endpoints: ['127.0.0.1:1', ...etcd.endpoints],
      callTimeoutMs: 3000 });
    try {
      const error = await dead.call('range', { key: bytes('x') }).then(() => undefined, (e) => e);
      assert.ok(error instanceof EtcdCallError, String(error));
      assert.equal(error.mayHaveArrived, false, error.message);
      assert.equal(error.outcome, 'failed');
      const answer = await dead.call('range', { key: bytes('x') });
      assert.ok(answer['header'] !== undefined);
    } finally {
      dead.close();
    }
  });

  test('token auth: calls carry the token, and an expired token is renewed once', async () => {
    await connection.call('userAdd', { name: 'root', password: 'rootpw' });
    await connection.call('userGrantRole', { user: 'root', role: 'root' });
    await connection.call('authEnable', {});
    const anonymous = await connection.call('range', { key: bytes('a') }).then(() => undefined,
      (e: unknown) => e);
    assert.ok(anonymous instanceof EtcdCallError, 'etcd refuses a call without a token');
    const authed = new EtcdConnection({ endpoints: etcd.endpoints,
      auth: { user: 'root', password: 'rootpw' } });
    try {
      await authed.call('put', { key: bytes('auth/a'), value: bytes('1') });
      assert.equal(authed.tokensFetched, 1);
      // etcd's own clock decides when the token expires (2 s TTL): wait past it, then the
      // next call is refused once and repeated with a fresh token.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      const range = await authed.call('range', { key: bytes('auth/a') });
      assert.equal((range['kvs'] as EtcdMessage[]).length, 1);
      assert.equal(authed.tokensFetched, 2, 'the expired token was renewed');
    } finally {
      authed.close();
    }
  });
});
