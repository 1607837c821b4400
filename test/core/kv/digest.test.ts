/**
 * Goal: the digest tells commands apart that do different things, and only those. Method:
 * fixed pairs (a field changed, an option spelled differently) and fast-check over random
 * strings (no collisions among distinct values).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { kvCommandDigest } from '../../../src/core/kv/digest.js';
import type { KvClientCommand } from '../../../src/core/kv/index.js';

const put = (fields: Partial<Extract<KvClientCommand, { kind: 'put' }>> = {}): KvClientCommand =>
  ({ kind: 'put', clientId: 'c', sequence: 1, nowMs: 5, key: 'k', value: 'v', ...fields });

describe('kv: command digest', () => {
  test('the stamp and default options do not count; every other field does', () => {
    const base = kvCommandDigest(put());
    assert.match(base, /^[0-9a-f]{16}$/);
    assert.equal(kvCommandDigest(put({ clientId: 'd', sequence: 9, nowMs: 99 })), base);
    assert.equal(kvCommandDigest(put({ prevKv: false })), base);
    for (const other of [put({ key: 'k2' }), put({ value: 'w' }), put({ prevKv: true }),
      put({ lease: 3 }), { kind: 'delete', nowMs: 5, key: 'k' } as KvClientCommand]) {
      assert.notEqual(kvCommandDigest(other), base);
    }
    // Field boundaries count: "ab"+"c" is not "a"+"bc".
    assert.notEqual(kvCommandDigest(put({ key: 'ab', value: 'c' })),
      kvCommandDigest(put({ key: 'a', value: 'bc' })));
  });

  test('transactions: compares and ops, in order', () => {
    const txn = (success: unknown[]): KvClientCommand =>
      ({ kind: 'txn', nowMs: 1, compare: [], success, failure: [] }) as unknown as KvClientCommand;
    const a = kvCommandDigest(txn([{ kind: 'put', key: 'a', value: '1' },
      { kind: 'range', key: 'a' }]));
    assert.notEqual(a, kvCommandDigest(txn([{ kind: 'range', key: 'a' },
      { kind: 'put', key: 'a', value: '1' }])));
    assert.equal(a, kvCommandDigest(txn([{ kind: 'put', key: 'a', value: '1' },
      { kind: 'range', key: 'a', limit: 0 }])));
  });

  test('distinct values give distinct digests', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }), (x, y) => {
        fc.pre(x !== y);
        assert.notEqual(kvCommandDigest(put({ value: x })), kvCommandDigest(put({ value: y })));
      }), { numRuns: 2000 });
  });
});
