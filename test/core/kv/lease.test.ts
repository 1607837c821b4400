/**
 * Goal: the store's leases do what docs/leases.md says: a grant's id is its entry index, keys
 * attach to existing leases only, a revoke or expiry deletes the lease's keys at one revision
 * with delete events, checkpoints and renewals change only the lease records, an expiry
 * decided before a renewal keeps the lease, and snapshots carry all of it. Method: example
 * tests through the public API (apply, applyEntry, snapshots), checking exact results, the
 * revision, the events and the client table after each step.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodeKvSnapshot, encodeKvCommand, encodeKvSnapshot, KvStore,
} from '../../../src/core/kv/index.js';
import type {
  KvApplyResult, KvLeaseSystemCommand, KvSnapshot,
} from '../../../src/core/kv/index.js';
import { logIndex, term } from '../../../src/core/ids.js';
import { Driver, expectError, expectKind } from './harness.js';

type SystemBody = KvLeaseSystemCommand extends infer C
  ? C extends unknown ? Omit<C, 'nowMs'> : never : never;

/** Applies one of the leader's lease commands at the next index. */
function system(d: Driver, body: SystemBody): KvApplyResult {
  d.index += 1;
  return d.store.apply(d.index, { ...body, nowMs: d.nowMs } as KvLeaseSystemCommand);
}

function grant(d: Driver, ttlMs = 10_000, clientId = 'c1'): number {
  return expectKind(d.run({ kind: 'lease-grant', ttlMs }, clientId), 'lease-grant').leaseId;
}

function eventsFrom(d: Driver, revision: number): string[] {
  const result = d.store.eventsSince(revision, { key: '', prefix: true });
  assert.equal(result.kind, 'events');
  return result.kind === 'events'
    ? result.events.map((e) => `${e.kv.modRevision}:${e.type}:${e.kv.key}`) : [];
}

describe('kv: leases: grant and attach', () => {
  test('a grant makes a lease whose id is the entry index, without a new revision', () => {
    const d = new Driver();
    d.put('a', '1');
    assert.deepEqual(d.run({ kind: 'lease-grant', ttlMs: 5000 }),
      { kind: 'lease-grant', revision: 2, leaseId: 2, ttlMs: 5000 });
    assert.deepEqual(d.store.lease(2),
      { id: 2, ttlMs: 5000, remainingMs: 5000, renewing: false, renewals: 0 });
    assert.equal(d.store.revision, 2);
    assert.equal(d.store.leaseCount, 1);
  });

  test('a retried grant returns the same lease and grants nothing more', () => {
    const d = new Driver();
    const command = d.stamp({ kind: 'lease-grant', ttlMs: 5000 });
    const first = d.applyStamped(command);
    assert.deepEqual(d.applyStamped(command), first);
    assert.equal(d.store.leaseCount, 1);
  });

  test('grants outside the TTL range or beyond leasesMax are refused', () => {
    const d = new Driver({ leasesMax: 1, leaseTtlMsMax: 60_000 });
    expectError(d.run({ kind: 'lease-grant', ttlMs: 0 }), 'invalid');
    expectError(d.run({ kind: 'lease-grant', ttlMs: 60_001 }), 'invalid');
    expectError(d.run({ kind: 'lease-grant', ttlMs: 1.5 }), 'invalid');
    grant(d, 60_000);
    assert.deepEqual(d.run({ kind: 'lease-grant', ttlMs: 1000 }),
      { kind: 'error', error: { code: 'lease-limit', leasesMax: 1 } });
  });

  test('a put attaches a key to an existing lease; naming a missing one changes nothing', () => {
    const d = new Driver();
    const lease = grant(d);
    assert.deepEqual(d.run({ kind: 'put', key: 'k', value: 'v', lease }),
      { kind: 'put', revision: 2 });
    assert.equal(d.store.get('k')?.lease, lease);
    assert.deepEqual(d.store.leaseKeys(lease), ['k']);
    assert.deepEqual(d.run({ kind: 'put', key: 'x', value: 'v', lease: 99 }),
      { kind: 'error', error: { code: 'lease-not-found', leaseId: 99 } });
    assert.equal(d.store.get('x'), undefined);
    assert.equal(d.store.revision, 2);
  });

  test('a put without a lease, or a delete, detaches the key', () => {
    const d = new Driver();
    const lease = grant(d);
    d.run({ kind: 'put', key: 'a', value: '1', lease });
    d.run({ kind: 'put', key: 'b', value: '1', lease });
    d.put('a', '2');
    assert.equal(d.store.get('a')?.lease, undefined);
    d.del('b');
    assert.deepEqual(d.store.leaseKeys(lease), []);
  });

  test('a put moves a key from one lease to another', () => {
    const d = new Driver();
    const first = grant(d);
    const second = grant(d);
    d.run({ kind: 'put', key: 'k', value: '1', lease: first });
    d.run({ kind: 'put', key: 'k', value: '2', lease: second });
    assert.deepEqual([d.store.leaseKeys(first), d.store.leaseKeys(second)], [[], ['k']]);
  });

  test('a txn whose branch puts on a missing lease fails whole; the other branch may run', () => {
    const d = new Driver();
    const lease = grant(d);
    const result = d.txn([], [{ kind: 'put', key: 'a', value: '1', lease },
      { kind: 'put', key: 'b', value: '1', lease: 77 }]);
    assert.deepEqual(result, { kind: 'error', error: { code: 'lease-not-found', leaseId: 77 } });
    assert.equal(d.store.get('a'), undefined);
    const other = d.txn([{ key: 'a', target: 'version', result: 'greater', version: 0 }],
      [{ kind: 'put', key: 'a', value: '1', lease: 77 }],
      [{ kind: 'put', key: 'a', value: '2', lease }]);
    assert.equal(expectKind(other, 'txn').succeeded, false);
    assert.equal(d.store.get('a')?.lease, lease);
  });
});

describe('kv: leases: revoke and expire', () => {
  test('a revoke deletes every key of the lease at one revision, in key order', () => {
    const d = new Driver();
    const lease = grant(d);
    d.run({ kind: 'put', key: 'z', value: '1', lease });
    d.run({ kind: 'put', key: 'a', value: '1', lease });
    d.put('other', '1');
    assert.deepEqual(d.run({ kind: 'lease-revoke', leaseId: lease }),
      { kind: 'lease-revoke', revision: 5, leaseId: lease, deleted: 2 });
    assert.deepEqual(eventsFrom(d, 5), ['5:delete:a', '5:delete:z']);
    assert.equal(d.store.lease(lease), undefined);
    assert.deepEqual([d.store.get('a'), d.store.get('other')?.value], [undefined, '1']);
  });

  test('a revoke of a lease without keys keeps the revision; of a missing lease, fails', () => {
    const d = new Driver();
    const lease = grant(d);
    assert.deepEqual(d.run({ kind: 'lease-revoke', leaseId: lease }),
      { kind: 'lease-revoke', revision: 1, leaseId: lease, deleted: 0 });
    expectError(d.run({ kind: 'lease-revoke', leaseId: lease }), 'lease-not-found');
  });

  test('an expiry revokes the listed leases together, at one revision', () => {
    const d = new Driver();
    const first = grant(d);
    const second = grant(d);
    d.run({ kind: 'put', key: 'b', value: '1', lease: first });
    d.run({ kind: 'put', key: 'a', value: '1', lease: second });
    const result = system(d, { kind: 'lease-expire', leases: [{ leaseId: first, renewals: 0 },
      { leaseId: second, renewals: 0 }, { leaseId: 1234, renewals: 0 }] });
    assert.deepEqual(result, { kind: 'lease-expire', revision: 4, expired: [first, second],
      kept: [], deleted: 2 });
    assert.deepEqual(eventsFrom(d, 4), ['4:delete:b', '4:delete:a']);
    assert.equal(d.store.leaseCount, 0);
  });

  test('an expiry decided before a renewal was applied keeps the lease', () => {
    const d = new Driver();
    const lease = grant(d);
    d.run({ kind: 'put', key: 'k', value: '1', lease });
    system(d, { kind: 'lease-renew', leaseIds: [lease] });
    const result = system(d, { kind: 'lease-expire', leases: [{ leaseId: lease, renewals: 0 }] });
    assert.deepEqual(result, { kind: 'lease-expire', revision: 2, expired: [], kept: [lease],
      deleted: 0 });
    assert.equal(d.store.get('k')?.value, '1');
    assert.equal(expectKind(system(d, { kind: 'lease-expire',
      leases: [{ leaseId: lease, renewals: 1 }] }), 'lease-expire').deleted, 1);
  });
});

describe('kv: leases: checkpoints and renewals', () => {
  test('a checkpoint records remaining TTLs (at most the TTL) and clears renewing', () => {
    const d = new Driver();
    const a = grant(d, 9000);
    const b = grant(d, 3000);
    system(d, { kind: 'lease-renew', leaseIds: [a, b] });
    assert.deepEqual(d.store.lease(a), { id: a, ttlMs: 9000, remainingMs: 9000, renewing: true,
      renewals: 1 });
    const result = system(d, { kind: 'lease-checkpoint', leases: [
      { leaseId: a, remainingMs: 4000 }, { leaseId: b, remainingMs: 5000 },
      { leaseId: 999, remainingMs: 1 }] });
    assert.deepEqual(result, { kind: 'lease-checkpoint', revision: 1, leases: [
      { leaseId: a, remainingMs: 4000 }, { leaseId: b, remainingMs: 3000 }] });
    assert.deepEqual(d.store.lease(a), { id: a, ttlMs: 9000, remainingMs: 4000, renewing: false,
      renewals: 1 });
    assert.equal(d.store.lease(b)?.remainingMs, 3000);
  });

  test('lease bookkeeping moves log time but leaves the revision and client table alone', () => {
    const d = new Driver();
    const lease = grant(d);
    d.nowMs += 60_000;
    system(d, { kind: 'lease-renew', leaseIds: [lease, 5555] });
    assert.equal(d.store.logTimeMs, d.nowMs);
    assert.equal(d.store.revision, 1);
    assert.equal(d.store.clientCount, 1);
  });

  test('a bookkeeping entry listing a lease twice or a negative TTL is invalid', () => {
    const d = new Driver();
    const lease = grant(d);
    expectError(system(d, { kind: 'lease-renew', leaseIds: [lease, lease] }), 'invalid');
    expectError(system(d, { kind: 'lease-checkpoint',
      leases: [{ leaseId: lease, remainingMs: -1 }] }), 'invalid');
    assert.equal(d.store.lease(lease)?.renewals, 0);
  });

  test('lease commands travel as log entries and apply the same', () => {
    const d = new Driver();
    const data = encodeKvCommand({ kind: 'lease-grant', clientId: 'c', sequence: 1, nowMs: 5,
      ttlMs: 7000 });
    const result = d.store.applyEntry({ index: logIndex(3), term: term(2), kind: 'normal', data });
    assert.deepEqual(result, { kind: 'lease-grant', revision: 1, leaseId: 3, ttlMs: 7000 });
    const renew = encodeKvCommand({ kind: 'lease-renew', nowMs: 6, leaseIds: [3] });
    d.store.applyEntry({ index: logIndex(4), term: term(2), kind: 'normal', data: renew });
    assert.equal(d.store.lease(3)?.renewing, true);
  });
});

describe('kv: leases: snapshots', () => {
  function leasedStore(): Driver {
    const d = new Driver();
    const first = grant(d);
    const second = grant(d, 20_000);
    d.run({ kind: 'put', key: 'm', value: '1', lease: first });
    d.run({ kind: 'put', key: 'b', value: '1', lease: first });
    d.run({ kind: 'put', key: 'c', value: '1', lease: second });
    system(d, { kind: 'lease-renew', leaseIds: [second] });
    return d;
  }

  test('a snapshot carries the leases; a restored store revokes the same keys in order', () => {
    const d = leasedStore();
    const snapshot = d.store.toSnapshot();
    assert.deepEqual(snapshot.leases.map((l) => [l.id, l.renewing]), [[1, false], [2, true]]);
    const decoded = decodeKvSnapshot(encodeKvSnapshot(snapshot));
    assert.deepEqual(decoded, snapshot);
    const restored = KvStore.fromSnapshot(decoded as KvSnapshot);
    assert.deepEqual(restored.leaseKeys(1), ['b', 'm']);
    const command = { kind: 'lease-revoke', clientId: 'c9', sequence: 1, nowMs: d.nowMs,
      leaseId: 1 } as const;
    assert.deepEqual(restored.apply(d.index + 1, command), d.store.apply(d.index + 1, command));
    assert.deepEqual(restored.toSnapshot(), d.store.toSnapshot());
  });

  test('a snapshot from before leases decodes with none; a key on a missing lease is refused',
    () => {
    const d = leasedStore();
    const { leases: _dropped, ...old } = d.store.toSnapshot();
    const encode = (value: unknown): Uint8Array =>
      new Uint8Array([1, ...new TextEncoder().encode(JSON.stringify(value))]);
    const withoutKeys = { ...old, kvs: old.kvs.map(({ lease: _l, ...kv }) => kv) };
    assert.deepEqual((decodeKvSnapshot(encode(withoutKeys)) as KvSnapshot).leases, []);
    const broken = decodeKvSnapshot(encode(old));
    assert.equal((broken as { kind?: string }).kind, 'decode-error');
    assert.match((broken as { reason: string }).reason, /unknown lease/);
    const bad = decodeKvSnapshot(encode({ ...d.store.toSnapshot(),
      leases: [{ id: 1, ttlMs: 5, remainingMs: 9, renewing: false, renewals: 0 },
        { id: 2, ttlMs: 5, remainingMs: 1, renewing: false, renewals: 0 }] }));
    assert.match((bad as { reason: string }).reason, /remainingMs above ttlMs/);
  });
});
