/**
 * adapters: etcd wire — the pure translations between the client protocol and etcd's v3
 * messages (etcd-wire.ts) and etcd's failures as our answers (etcd-outcomes.ts): prefix range
 * ends, 64-bit fields read or refused, lease ids chosen from the idempotency key, watch frames,
 * and which errors are `failed` (refused before a proposal) or `unknown`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { EtcdCallError } from '../../src/adapters/etcd/etcd-connection.js';
import { failureAnswer } from '../../src/adapters/etcd/etcd-outcomes.js';
import { watchFrameOf } from '../../src/adapters/etcd/etcd-streams.js';
import {
  compareOf, int, keyRange, keyValueOf, leaseIdFor, prefixEnd, ttlSecondsOf,
} from '../../src/adapters/etcd/etcd-wire.js';
import { CoordError } from '../../src/errors.js';

const b = (s: string): Buffer => Buffer.from(s);

describe('adapters: etcd wire', () => {
  test('a prefix is [prefix, prefix with its last byte below 0xff incremented)', () => {
    assert.deepEqual(prefixEnd(b('a/')), b('a0'));
    assert.deepEqual(prefixEnd(Buffer.from([0x61, 0xff])), b('b'));
    assert.deepEqual(prefixEnd(Buffer.from([0xff, 0xff])), Buffer.from([0]));
    assert.deepEqual(keyRange('', true), { key: Buffer.from([0]), range_end: Buffer.from([0]) });
    assert.deepEqual(keyRange('k', false), { key: b('k') });
  });

  test('64-bit fields beyond 2^53 are refused, not rounded; a foreign lease id is left out',
    () => {
      assert.equal(int('9007199254740991', 'x'), 2 ** 53 - 1);
      assert.throws(() => int('9007199254740993', 'revision'),
        (e: unknown) => e instanceof CoordError && e.code === 'CONCLAVE_PROTOCOL');
      const kv = keyValueOf({ key: b('k'), value: b('v'), create_revision: '2',
        mod_revision: '3', version: '1', lease: '7587869912373474000' });
      assert.equal(kv.lease, undefined);
      assert.equal(keyValueOf({ key: b('k'), value: b('v'), create_revision: '2',
        mod_revision: '3', version: '1', lease: '42' }).lease, 42);
    });

  test('a lease id is the same for a retry of one grant, differs across grants, and is safe',
    () => {
      const once = leaseIdFor({ clientId: 'c-1.0', sequence: 5 });
      assert.equal(leaseIdFor({ clientId: 'c-1.0', sequence: 5 }), once);
      assert.notEqual(leaseIdFor({ clientId: 'c-1.0', sequence: 6 }), once);
      assert.notEqual(leaseIdFor({ clientId: 'c-2.0', sequence: 5 }), once);
      for (const id of [once, leaseIdFor({})]) assert.ok(Number.isSafeInteger(id) && id > 0);
    });

  test('TTLs round up to whole seconds; compares name etcd\'s targets', () => {
    assert.equal(ttlSecondsOf(10_000), 10);
    assert.equal(ttlSecondsOf(2_500), 3);
    assert.equal(ttlSecondsOf(1), 1);
    assert.deepEqual(compareOf({ key: 'k', target: 'createRevision', result: 'equal',
      createRevision: 0 }), { key: b('k'), result: 'EQUAL', target: 'CREATE',
      create_revision: 0 });
  });

  test('watch answers: events resume after the last revision, compaction ends the stream', () => {
    const frame = watchFrameOf({ header: { revision: '9' }, events: [
      { type: 'PUT', kv: { key: b('a'), value: b('1'), create_revision: '5', mod_revision: '5',
        version: '1' }, prev_kv: null },
      { type: 'DELETE', kv: { key: b('a'), value: b(''), create_revision: '0',
        mod_revision: '7', version: '0' }, prev_kv: null },
    ] });
    assert.equal(frame.kind, 'events');
    assert.equal(frame.kind === 'events' && frame.nextRevision, 8);
    assert.deepEqual(frame.kind === 'events' && frame.events.map((e) => e.type),
      ['put', 'delete']);
    assert.deepEqual(watchFrameOf({ header: { revision: '9' }, compact_revision: '6',
      canceled: true }), { kind: 'compacted', compactRevision: 6 });
    assert.deepEqual(watchFrameOf({ header: { revision: '9' }, events: [] }),
      { kind: 'progress', revision: 9 });
  });

  test('etcd\'s refusals before a proposal are `failed`; timeouts and lost connections are '
    + '`unknown` unless nothing was sent', () => {
    const refusal = (code: grpc.status, details: string, sent = true) =>
      failureAnswer(new EtcdCallError('KV/Put', 'e1', code, details, sent), 'e1', false);
    const lease = refusal(grpc.status.NOT_FOUND, 'etcdserver: requested lease not found');
    assert.equal(lease.kind === 'refused' && lease.error.code, 'CONCLAVE_LEASE_EXPIRED');
    assert.equal(lease.kind === 'refused' && lease.error.outcome, 'failed');
    const compacted = refusal(grpc.status.OUT_OF_RANGE,
      'etcdserver: mvcc: required revision has been compacted');
    assert.equal(compacted.kind === 'refused' && compacted.error.code, 'CONCLAVE_KV_COMPACTED');
    const timeout = refusal(grpc.status.UNAVAILABLE, 'etcdserver: request timed out');
    assert.equal(timeout.kind === 'refused' && timeout.error.code, 'CONCLAVE_TIMEOUT');
    assert.equal(timeout.kind === 'refused' && timeout.error.outcome, 'unknown');
    const reset = refusal(grpc.status.UNAVAILABLE, 'Connection dropped');
    assert.deepEqual([reset.kind, reset.kind === 'lost' && reset.sent], ['lost', true]);
    const never = refusal(grpc.status.UNAVAILABLE, 'No connection established', false);
    assert.deepEqual([never.kind, never.kind === 'lost' && never.sent], ['lost', false]);
  });
});
