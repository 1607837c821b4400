/**
 * Goal: users, roles and permissions behave as docs/security.md says, in the replicated store:
 * root-only changes while auth is on, permissions on keys and prefixes, lease ownership, a
 * clientId scoped to its principal, and the auth state surviving a snapshot (and being absent
 * from one of a store that never used auth). Method: drive a KvStore with auth commands and
 * principal-stamped writes; a property test (fast-check) of the command codec over random auth
 * ops and malformed shapes: decoding is total and a decoded op re-encodes to the same bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  decodeKvCommand, decodeKvSnapshot, encodeKvCommand, encodeKvSnapshot, KvStore,
  validateKvCommand, KV_STORE_DEFAULTS,
} from '../../../src/core/kv/index.js';
import type {
  KvApplyResult, KvAuthOp, KvCommand, KvPasswordHash, KvSnapshot,
} from '../../../src/core/kv/index.js';
import { commandDenial, readDenial } from '../../../src/core/kv/index.js';
import { Driver } from './harness.js';

const HASH: KvPasswordHash = { salt: 'c2FsdHNhbHRzYWx0c2FsdA==',
  hash: 'aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=', N: 32768, r: 8, p: 1 };
const KEY = 'ab'.repeat(32);

/** Applies an auth op as `principal` (absent: auth off). */
function auth(d: Driver, op: KvAuthOp, principal?: string): KvApplyResult {
  return d.run({ kind: 'auth', ...op, ...(principal === undefined ? {} : { principal }) } as
    Parameters<Driver['run']>[0]);
}

function as(d: Driver, principal: string, body: Record<string, unknown>, clientId = 'c1')
  : KvApplyResult {
  return d.run({ ...body, principal } as Parameters<Driver['run']>[0], clientId);
}

const code = (result: KvApplyResult): string =>
  result.kind === 'error' ? result.error.code : result.kind;

/** A store with root, and alice reading app/ through the role app-reader, auth on. */
function setUp(): Driver {
  const d = new Driver();
  assert.equal(code(auth(d, { op: 'enable', tokenKey: KEY })), 'auth-refused', 'needs root');
  auth(d, { op: 'user-add', user: 'root', password: HASH });
  auth(d, { op: 'user-add', user: 'alice', password: HASH });
  auth(d, { op: 'user-add', user: 'bob', password: HASH });
  auth(d, { op: 'role-add', role: 'app-reader' });
  auth(d, { op: 'role-grant-permission', role: 'app-reader',
    permission: { type: 'read', key: 'app/', prefix: true } });
  auth(d, { op: 'role-add', role: 'app-writer' });
  auth(d, { op: 'role-grant-permission', role: 'app-writer',
    permission: { type: 'readwrite', key: 'app/', prefix: true } });
  auth(d, { op: 'user-grant-role', user: 'alice', role: 'app-reader' });
  auth(d, { op: 'user-grant-role', user: 'bob', role: 'app-writer' });
  assert.equal(code(auth(d, { op: 'enable', tokenKey: KEY })), 'auth');
  return d;
}

describe('kv: auth', () => {
  test('enable needs the user root; root holds the role root from its creation', () => {
    const d = setUp();
    const a = d.store.auth;
    assert.equal(a.enabled, true);
    assert.equal(a.tokenKey, KEY);
    assert.deepEqual(a.user('root')?.roles, ['root']);
    assert.equal(a.isRoot('root'), true);
    assert.equal(a.isRoot('alice'), false);
    assert.deepEqual(a.roleNames(), ['root', 'app-reader', 'app-writer']);
  });

  test('while enabled, only root changes users and roles (checked on apply)', () => {
    const d = setUp();
    assert.equal(code(auth(d, { op: 'role-add', role: 'x' }, 'alice')), 'permission-denied');
    assert.equal(d.store.auth.role('x'), undefined);
    assert.equal(code(auth(d, { op: 'role-add', role: 'x' }, 'root')), 'auth');
    assert.equal(code(auth(d, { op: 'user-delete', user: 'root' }, 'root')), 'auth-refused');
    assert.equal(code(auth(d, { op: 'user-revoke-role', user: 'root', role: 'root' }, 'root')),
      'auth-refused');
    assert.equal(code(auth(d, { op: 'role-delete', role: 'root' }, 'root')), 'auth-refused');
  });

  test('read on app/ reads app/x and may not write it; write on app/ may', () => {
    const d = setUp();
    const a = d.store.auth;
    assert.equal(readDenial(a, 'alice', { key: 'app/x' }), undefined);
    assert.equal(readDenial(a, 'alice', { key: 'app/', prefix: true }), undefined);
    assert.match(readDenial(a, 'alice', { key: 'ap', prefix: true }) ?? '', /may not read/);
    assert.match(readDenial(a, 'alice', { key: 'other' }) ?? '', /may not read/);
    assert.equal(code(as(d, 'alice', { kind: 'put', key: 'app/x', value: '1' })),
      'permission-denied');
    assert.equal(d.store.get('app/x'), undefined);
    assert.equal(code(as(d, 'bob', { kind: 'put', key: 'app/x', value: '1' })), 'put');
    assert.equal(code(as(d, 'bob', { kind: 'put', key: 'other', value: '1' })),
      'permission-denied');
    // A transaction needs read on compared keys and write on both branches' writes.
    const txn = { kind: 'txn', compare: [{ key: 'app/x', target: 'version', result: 'equal',
      version: 1 }], success: [{ kind: 'put', key: 'app/y', value: '2' }], failure: [] };
    assert.equal(code(as(d, 'alice', txn)), 'permission-denied');
    assert.equal(code(as(d, 'bob', txn)), 'txn');
    assert.equal(code(as(d, 'bob', { kind: 'compact', revision: 2 })), 'permission-denied');
    assert.equal(code(as(d, 'root', { kind: 'compact', revision: 2 })), 'compact');
  });

  test('a revoked permission wins over a command proposed before it (apply checks again)', () => {
    const d = setUp();
    const put = d.stamp({ kind: 'put', key: 'app/z', value: '1', principal: 'bob' } as
      Parameters<Driver['run']>[0], 'bob');
    assert.equal(commandDenial(d.store.auth, 'bob', put as never, () => undefined), undefined);
    auth(d, { op: 'user-revoke-role', user: 'bob', role: 'app-writer' }, 'root');
    assert.equal(code(d.applyStamped(put)), 'permission-denied');
  });

  test('a lease is its granter\'s: another user may not revoke it or attach keys; root may', () => {
    const d = setUp();
    const grant = as(d, 'bob', { kind: 'lease-grant', ttlMs: 10_000 });
    assert.equal(grant.kind, 'lease-grant');
    const leaseId = (grant as { leaseId: number }).leaseId;
    assert.equal(d.store.lease(leaseId)?.owner, 'bob');
    auth(d, { op: 'user-grant-role', user: 'alice', role: 'app-writer' }, 'root');
    assert.equal(code(as(d, 'alice', { kind: 'lease-revoke', leaseId })), 'permission-denied');
    assert.equal(code(as(d, 'alice', { kind: 'put', key: 'app/l', value: '1',
      lease: leaseId })), 'permission-denied');
    assert.equal(code(as(d, 'bob', { kind: 'put', key: 'app/l', value: '1', lease: leaseId })),
      'put');
    assert.equal(code(as(d, 'root', { kind: 'lease-revoke', leaseId })), 'lease-revoke');
  });

  test('a clientId is scoped to its principal: the same id and sequence are two requests', () => {
    const d = setUp();
    const first = d.applyStamped({ kind: 'put', key: 'app/a', value: 'bob', clientId: 'same',
      sequence: 1, nowMs: d.nowMs, principal: 'bob' });
    assert.equal(first.kind, 'put');
    auth(d, { op: 'user-grant-role', user: 'alice', role: 'app-writer' }, 'root');
    // alice's request with bob's key is new (not bob's retry, not a mismatch).
    const second = d.applyStamped({ kind: 'put', key: 'app/a', value: 'alice',
      clientId: 'same', sequence: 1, nowMs: d.nowMs, principal: 'alice' });
    assert.equal(second.kind, 'put');
    assert.equal(d.store.get('app/a')?.value, 'alice');
    assert.equal(d.store.clientRecord('same'), undefined);
  });

  test('the auth state survives a snapshot; a store without auth has no auth section', () => {
    const d = setUp();
    as(d, 'bob', { kind: 'lease-grant', ttlMs: 10_000 });
    const snapshot = d.store.toSnapshot();
    const decoded = decodeKvSnapshot(encodeKvSnapshot(snapshot)) as KvSnapshot;
    assert.equal('kind' in decoded, false, JSON.stringify(decoded));
    assert.deepEqual(decoded, snapshot);
    const restored = KvStore.fromSnapshot(decoded);
    assert.equal(restored.auth.enabled, true);
    assert.equal(restored.auth.permits('alice', { key: 'app/x' }, 'read'), true);
    assert.equal(restored.leases()[0]?.owner, 'bob');
    const plain = new Driver();
    plain.put('a', '1');
    assert.equal('auth' in plain.store.toSnapshot(), false);
    // A damaged auth section is refused by name.
    const broken = { ...snapshot, auth: { ...snapshot.auth, users: [{ name: 'a b' }] } };
    const refused = decodeKvSnapshot(encodeKvSnapshot(broken as unknown as KvSnapshot));
    assert.equal('kind' in refused && refused.kind, 'decode-error');
  });

  test('property: auth commands decode totally and round-trip their bytes', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9._@-]{1,8}$/);
    const op: fc.Arbitrary<KvAuthOp> = fc.oneof(
      fc.constant({ op: 'disable' } as KvAuthOp),
      fc.constant({ op: 'enable', tokenKey: KEY } as KvAuthOp),
      name.map((user) => ({ op: 'user-add', user, password: HASH }) as KvAuthOp),
      fc.tuple(name, name).map(([user, role]) => ({ op: 'user-grant-role', user, role }) as
        KvAuthOp),
      fc.tuple(name, fc.constantFrom('read', 'write', 'readwrite'), fc.string(), fc.boolean())
        .map(([role, type, key, prefix]) => ({ op: 'role-grant-permission', role,
          permission: { type, key, ...(prefix ? { prefix: true } : {}) } }) as KvAuthOp));
    fc.assert(fc.property(op, fc.option(name, { nil: undefined }), (authOp, principal) => {
      const command = { kind: 'auth', nowMs: 5, ...authOp,
        ...(principal === undefined ? {} : { principal }) } as KvCommand;
      const bytes = encodeKvCommand(command);
      const decoded = decodeKvCommand(bytes);
      assert.notEqual(decoded.kind, 'decode-error', JSON.stringify(decoded));
      assert.deepEqual(encodeKvCommand(decoded as KvCommand), bytes);
    }));
    const junk = fc.record({ op: fc.oneof(fc.string(), fc.integer()),
      user: fc.oneof(fc.string(), fc.integer()), password: fc.anything(),
      permission: fc.anything(), extra: fc.anything() }, { requiredKeys: [] });
    fc.assert(fc.property(junk, (fields) => {
      const bytes = new TextEncoder().encode(`\u0001${JSON.stringify({ kind: 'auth', nowMs: 1,
        ...fields })}`);
      const decoded = decodeKvCommand(bytes);
      if (decoded.kind !== 'decode-error') {
        // What decodes is judged by validation, never by an exception.
        validateKvCommand(decoded, KV_STORE_DEFAULTS);
      }
    }));
  });

  test('validation names bad names, hashes and keys', () => {
    const problems = validateKvCommand({ kind: 'auth', nowMs: 1, op: 'user-add', user: 'a b',
      password: { ...HASH, N: 1000 } }, KV_STORE_DEFAULTS).map((p) => p.field);
    assert.deepEqual(problems, ['user', 'password.N']);
    assert.deepEqual(validateKvCommand({ kind: 'put', key: 'k', value: 'v', nowMs: 1,
      principal: 'x/y' }, KV_STORE_DEFAULTS).map((p) => p.field), ['principal']);
  });
});
