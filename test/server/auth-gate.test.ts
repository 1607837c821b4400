/**
 * Goal: the token check at the client door stays sound with its cache of checked tokens: a
 * token is answered with its user; a forged one (another MAC, or a payload changed under the
 * genuine MAC) is refused even after the genuine token was cached; a cached token is refused
 * once it expires, once its user's password changes or the user is deleted, and once auth was
 * turned off and on (a new key); a role change takes effect on the next call (roles are read
 * from the live table, never cached). Method: an AuthGate over a mutable AuthTable and a wall
 * clock the test sets; no sockets, no scrypt.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AuthTable, readDenial, type KvAuthOp, type KvPasswordHash } from
  '../../src/core/kv/index.js';
import { AuthGate } from '../../src/server/auth-gate.js';
import { CoordError } from '../../src/errors.js';

const HASH: KvPasswordHash = { salt: 'c2FsdHNhbHRzYWx0c2FsdA==',
  hash: 'aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=', N: 32768, r: 8, p: 1 };
const KEY_A = 'ab'.repeat(32);
const KEY_B = 'cd'.repeat(32);
const TTL_MS = 60_000;

interface World {
  readonly table: AuthTable;
  readonly gate: AuthGate;
  index: number;
  nowMs: number;
  apply(op: KvAuthOp): void;
}

/** root, and alice reading app/ through the role app-reader; auth on with KEY_A. */
function world(): World {
  const table = new AuthTable();
  const w: World = {
    table, index: 0, nowMs: 1_000_000,
    gate: new AuthGate(() => table, () => w.nowMs, TTL_MS),
    apply(op) {
      w.index += 1;
      assert.equal(table.apply(w.index, op).kind, 'ok', JSON.stringify(op));
    },
  };
  w.apply({ op: 'user-add', user: 'root', password: HASH });
  w.apply({ op: 'user-add', user: 'alice', password: HASH });
  w.apply({ op: 'role-add', role: 'app-reader' });
  w.apply({ op: 'role-grant-permission', role: 'app-reader',
    permission: { type: 'read', key: 'app/', prefix: true } });
  w.apply({ op: 'user-grant-role', user: 'alice', role: 'app-reader' });
  w.apply({ op: 'enable', tokenKey: KEY_A });
  return w;
}

function tokenOf(w: World, user: string): string {
  const record = w.table.user(user);
  assert.ok(record !== undefined, user);
  return w.gate.issue(user, record.passwordIndex, w.table.tokenKey).token;
}

const refusal = (answer: string | CoordError | undefined): string =>
  answer instanceof CoordError ? answer.code : `accepted as ${String(answer)}`;

describe('server: auth gate: checked tokens', () => {
  test('a genuine token names its user, the same on every call (the cached answer)', () => {
    const w = world();
    const token = tokenOf(w, 'alice');
    assert.equal(w.gate.principalOf(token), 'alice');
    assert.equal(w.gate.principalOf(token), 'alice');
    assert.equal(refusal(w.gate.principalOf(undefined)), 'CONCLAVE_INVALID_TOKEN');
  });

  test('a forged token is refused, also after the genuine one was cached', () => {
    const w = world();
    const token = tokenOf(w, 'alice');
    assert.equal(w.gate.principalOf(token), 'alice');
    const [payload, mac] = token.split('.') as [string, string];
    const flipped = `${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    assert.equal(refusal(w.gate.principalOf(flipped)), 'CONCLAVE_INVALID_TOKEN');
    // A payload naming root under alice's MAC.
    const rootPayload = Buffer.from(JSON.stringify({ u: 'root', i: 1, e: w.nowMs + TTL_MS }))
      .toString('base64url');
    assert.equal(refusal(w.gate.principalOf(`${rootPayload}.${mac}`)),
      'CONCLAVE_INVALID_TOKEN');
    // Signed with another key.
    const other = w.gate.issue('root', 1, KEY_B).token;
    assert.equal(refusal(w.gate.principalOf(other)), 'CONCLAVE_INVALID_TOKEN');
    assert.equal(refusal(w.gate.principalOf('not-a-token')), 'CONCLAVE_INVALID_TOKEN');
    assert.equal(w.gate.principalOf(token), 'alice', 'the genuine token still works');
  });

  test('a cached token is refused from its expiry on', () => {
    const w = world();
    const token = tokenOf(w, 'alice');
    assert.equal(w.gate.principalOf(token), 'alice');
    w.nowMs += TTL_MS - 1;
    assert.equal(w.gate.principalOf(token), 'alice');
    w.nowMs += 1;
    assert.equal(refusal(w.gate.principalOf(token)), 'CONCLAVE_INVALID_TOKEN');
  });

  test('a cached token is refused after a password change, a user deletion or a new key',
    () => {
      const w = world();
      const alice = tokenOf(w, 'alice');
      assert.equal(w.gate.principalOf(alice), 'alice');
      w.apply({ op: 'user-passwd', user: 'alice', password: HASH });
      assert.equal(refusal(w.gate.principalOf(alice)), 'CONCLAVE_INVALID_TOKEN');
      assert.equal(w.gate.principalOf(tokenOf(w, 'alice')), 'alice', 'a new login works');

      const fresh = tokenOf(w, 'alice');
      assert.equal(w.gate.principalOf(fresh), 'alice');
      w.apply({ op: 'user-delete', user: 'alice' });
      w.apply({ op: 'user-add', user: 'alice', password: HASH });
      assert.equal(refusal(w.gate.principalOf(fresh)), 'CONCLAVE_INVALID_TOKEN',
        'a re-added user does not inherit the old tokens');

      const root = tokenOf(w, 'root');
      assert.equal(w.gate.principalOf(root), 'root');
      w.apply({ op: 'disable' });
      assert.equal(w.gate.principalOf(root), undefined, 'auth off: tokens are ignored');
      w.apply({ op: 'enable', tokenKey: KEY_B });
      assert.equal(refusal(w.gate.principalOf(root)), 'CONCLAVE_INVALID_TOKEN',
        'auth turned off and on: a new key, so older tokens end');
      assert.equal(w.gate.principalOf(tokenOf(w, 'root')), 'root');
    });

  test('a role change takes effect on the next call with the same cached token', () => {
    const w = world();
    const token = tokenOf(w, 'alice');
    const may = (): string | undefined => {
      const principal = w.gate.principalOf(token);
      assert.equal(principal, 'alice');
      return readDenial(w.table, principal, { key: 'app/x' });
    };
    assert.equal(may(), undefined);
    w.apply({ op: 'user-revoke-role', user: 'alice', role: 'app-reader' });
    assert.match(may() ?? '', /may not read/);
    w.apply({ op: 'user-grant-role', user: 'alice', role: 'app-reader' });
    assert.equal(may(), undefined);
    w.apply({ op: 'role-revoke-permission', role: 'app-reader', key: 'app/', prefix: true });
    assert.match(may() ?? '', /may not read/);
  });
});
