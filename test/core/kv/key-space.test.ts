/**
 * Goal: the blocked key space answers exactly as a plain sorted list of keys would, through
 * block splits and merges. Method: fast-check runs random sequences of sets, deletes and
 * prefix selects against a Map-plus-sorted-array model, with tiny blocks (2 to 8 keys) so
 * splits and merges happen constantly, and once with the default block size over more keys
 * than one block holds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { KEY_BLOCK_KEYS_MAX, KeySpace } from '../../../src/core/kv/key-space.js';
import { compareKeys } from '../../../src/core/kv/text.js';
import type { KeyValue } from '../../../src/core/kv/types.js';

type Op =
  | { readonly kind: 'set'; readonly key: string }
  | { readonly kind: 'delete'; readonly key: string }
  | { readonly kind: 'select'; readonly key: string; readonly prefix: boolean };

/** Short keys over a small alphabet: many shared prefixes, and deletes that hit. */
const keyArb = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '\u00e9', '😀'), maxLength: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: keyArb.map((key) => ({ kind: 'set' as const, key })) },
  { weight: 3, arbitrary: keyArb.map((key) => ({ kind: 'delete' as const, key })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('select' as const), key: keyArb,
    prefix: fc.boolean() }) },
);

function kvOf(key: string, modRevision: number): KeyValue {
  return { key, value: `v${modRevision}`, createRevision: 1, modRevision, version: 1 };
}

/** Runs `ops` on a KeySpace and on the model, comparing every answer. */
function runAgainstModel(space: KeySpace, ops: readonly Op[]): void {
  const model = new Map<string, KeyValue>();
  const sorted = (): KeyValue[] => [...model.values()]
    .sort((a, b) => compareKeys(a.key, b.key));
  ops.forEach((op, step) => {
    switch (op.kind) {
      case 'set':
        space.set(kvOf(op.key, step));
        model.set(op.key, kvOf(op.key, step));
        break;
      case 'delete':
        space.delete(op.key);
        model.delete(op.key);
        break;
      case 'select': {
        const expected = op.prefix ? sorted().filter((kv) => kv.key.startsWith(op.key))
          : model.has(op.key) ? [model.get(op.key)] : [];
        assert.deepEqual(space.select(op), expected, `step ${step}: ${JSON.stringify(op)}`);
        break;
      }
      default:
        throw new Error('unreachable');
    }
    assert.equal(space.size, model.size);
  });
  assert.deepEqual(space.all(), sorted());
  assert.deepEqual(space.select({ key: '', prefix: true }), sorted());
}

describe('kv: key space', () => {
  test('sets, deletes and prefix selects match a sorted list through splits and merges', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 8 }), fc.array(opArb, { maxLength: 300 }),
      (blockKeysMax, ops) => runAgainstModel(new KeySpace(blockKeysMax), ops)),
    { numRuns: 300 });
  });

  test('the default block size keeps order over several blocks, then empties', () => {
    const count = KEY_BLOCK_KEYS_MAX * 5;
    // A fixed shuffle (multiplication by a unit mod count) puts inserts all over the blocks.
    const keys = Array.from({ length: count }, (_, i) => String((i * 7919) % count)
      .padStart(6, '0'));
    const ops: Op[] = [...keys.map((key) => ({ kind: 'set' as const, key })),
      { kind: 'select', key: '0001', prefix: true },
      ...keys.slice(0, count - 10).map((key) => ({ kind: 'delete' as const, key })),
      { kind: 'select', key: '00', prefix: true }];
    runAgainstModel(new KeySpace(), ops);
  });

  test('a block size below 2 is a programmer error', () => {
    assert.throws(() => new KeySpace(1), /blockKeysMax/);
  });
});
