/**
 * Goal: the generation clock applies the Generation Clock rule (lower → reject with ours,
 * equal → accept, higher → adopt), only grows, and enforces persist-before-use.
 * Method: a classification table; a fast-check model run over random sequences of observe,
 * next and markPersisted; examples for the pending/usable states and the assertions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  GenerationClock,
  classifyIncoming,
  compareGenerations,
  isValidGeneration,
  type GenerationDecision,
} from '../../../src/core/generation/index.js';
import { generation, term, type Generation, type Term } from '../../../src/core/ids.js';

describe('generation: classifyIncoming', () => {
  const table: readonly (readonly [number, number, GenerationDecision<number>])[] = [
    // local, incoming, decision
    [5, 4, { kind: 'reject', current: 5 }],
    [5, 0, { kind: 'reject', current: 5 }],
    [5, 5, { kind: 'accept' }],
    [0, 0, { kind: 'accept' }],
    [5, 6, { kind: 'adopt', previous: 5, next: 6 }],
    [0, 9, { kind: 'adopt', previous: 0, next: 9 }],
    [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1,
      { kind: 'reject', current: Number.MAX_SAFE_INTEGER }],
  ];
  for (const [local, incoming, expected] of table) {
    test(`local ${local}, incoming ${incoming} → ${expected.kind}`, () => {
      assert.deepEqual(classifyIncoming(local, incoming), expected);
    });
  }

  test('compareGenerations names incoming relative to local', () => {
    assert.equal(compareGenerations(3, 2), 'lower');
    assert.equal(compareGenerations(3, 3), 'equal');
    assert.equal(compareGenerations(3, 4), 'higher');
  });

  test('a generation that is not a safe integer >= 0 is a programmer error', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      assert.equal(isValidGeneration(bad), false);
      assert.throws(() => classifyIncoming(1, bad), /safe integer/);
    }
    assert.equal(isValidGeneration('3'), false);
  });
});

describe('generation: clock', () => {
  test('works over Raft terms and emergent-leader generations alike', () => {
    const terms = new GenerationClock<Term>(term(2));
    const t: Term = terms.next();
    assert.equal(t, 3);
    const generations = new GenerationClock<Generation>(generation(7));
    const decision = generations.observe(generation(9));
    assert.deepEqual(decision, { kind: 'adopt', previous: 7, next: 9 });
  });

  test('observe rejects lower, accepts equal and adopts higher generations', () => {
    const clock = new GenerationClock(4);
    clock.markPersisted(4);
    assert.deepEqual(clock.observe(3), { kind: 'reject', current: 4 });
    assert.equal(clock.current, 4);
    assert.deepEqual(clock.observe(4), { kind: 'accept' });
    assert.deepEqual(clock.observe(6), { kind: 'adopt', previous: 4, next: 6 });
    assert.equal(clock.current, 6);
    assert.deepEqual(clock.observe(5), { kind: 'reject', current: 6 });
    assert.equal(clock.compare(7), 'higher');
  });

  test('a new or adopted generation is pending and not usable until it is persisted', () => {
    const clock = new GenerationClock(0);
    assert.equal(clock.usable(), true);
    const g = clock.next();
    assert.equal(g, 1);
    assert.equal(clock.pending, true);
    assert.equal(clock.usable(), false);
    assert.throws(() => clock.assertUsable(), /generation 1 used before it was persisted/);
    clock.markPersisted(g);
    assert.equal(clock.usable(), true);
    clock.assertUsable();
    clock.observe(5);
    assert.equal(clock.usable(), false);
    assert.equal(clock.durable, 1);
  });

  test('persisting an older generation does not make a newer one usable', () => {
    const clock = new GenerationClock(0);
    const first = clock.next();
    const second = clock.next();
    clock.markPersisted(first);
    assert.equal(clock.durable, first);
    assert.equal(clock.usable(), false);
    clock.markPersisted(second);
    clock.markPersisted(first); // a late completion changes nothing
    assert.equal(clock.durable, second);
    assert.equal(clock.usable(), true);
  });

  test('persisting a generation ahead of the current one is a programmer error', () => {
    const clock = new GenerationClock(3);
    assert.throws(() => clock.markPersisted(4), /ahead of the current generation 3/);
  });

  test('next past the largest safe integer is a programmer error', () => {
    const clock = new GenerationClock(Number.MAX_SAFE_INTEGER);
    assert.throws(() => clock.next(), /safe integer/);
    assert.equal(clock.current, Number.MAX_SAFE_INTEGER);
  });

  test('current and durable never decrease, and durable never passes current', () => {
    type Op =
      | { readonly op: 'observe'; readonly incoming: number }
      | { readonly op: 'next' }
      | { readonly op: 'persist'; readonly back: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('observe' as const), incoming: fc.nat({ max: 40 }) }),
      fc.record({ op: fc.constant('next' as const) }),
      fc.record({ op: fc.constant('persist' as const), back: fc.nat({ max: 3 }) }),
    );
    fc.assert(fc.property(fc.nat({ max: 20 }), fc.array(op, { maxLength: 60 }), (start, ops) => {
      const clock = new GenerationClock(start);
      for (const o of ops) {
        const before = { current: clock.current, durable: clock.durable };
        if (o.op === 'observe') {
          const d = clock.observe(o.incoming);
          assert.equal(d.kind, o.incoming < before.current ? 'reject'
            : o.incoming === before.current ? 'accept' : 'adopt');
          assert.equal(clock.current, Math.max(before.current, o.incoming));
        } else if (o.op === 'next') {
          assert.equal(clock.next(), before.current + 1);
        } else {
          clock.markPersisted(Math.max(0, clock.current - o.back));
        }
        assert.ok(clock.current >= before.current);
        assert.ok(clock.durable >= before.durable);
        assert.ok(clock.durable <= clock.current);
        assert.equal(clock.usable(), clock.durable === clock.current);
      }
    }), { numRuns: 300 });
  });
});
