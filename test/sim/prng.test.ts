/**
 * sim: prng — the seeded generator every simulated choice comes from.
 * Method: fixed seeds give fixed streams; a chi-square-style bucket check catches gross bias.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { randomInt, shuffle } from '../../src/core/random.js';
import { Prng } from '../../src/sim/prng.js';

describe('sim: prng', () => {
  test('the same seed gives the same stream', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), (seed) => {
      const a = new Prng(seed);
      const b = new Prng(seed);
      for (let i = 0; i < 50; i++) assert.equal(a.nextUint32(), b.nextUint32());
    }));
  });

  test('neighbouring seeds give different streams', () => {
    const first = (seed: number): number[] => {
      const p = new Prng(seed);
      return [p.nextUint32(), p.nextUint32(), p.nextUint32()];
    };
    assert.notDeepEqual(first(1), first(2));
    assert.notDeepEqual(first(0), first(1));
  });

  test('outputs are 32-bit unsigned integers spread evenly over 16 buckets', () => {
    const p = new Prng(42);
    const buckets = new Array<number>(16).fill(0);
    const draws = 160_000;
    for (let i = 0; i < draws; i++) {
      const x = p.nextUint32();
      assert.ok(Number.isInteger(x) && x >= 0 && x < 2 ** 32);
      buckets[x >>> 28]! += 1;
    }
    for (const count of buckets) assert.ok(Math.abs(count - draws / 16) < 500, `bucket ${count}`);
  });

  test('randomInt stays in range and shuffle keeps every element', () => {
    const p = new Prng(7);
    for (let i = 0; i < 1000; i++) {
      const x = randomInt(p, -3, 4);
      assert.ok(x >= -3 && x < 4);
    }
    const items = Array.from({ length: 20 }, (_, i) => i);
    assert.deepEqual([...shuffle(p, [...items])].sort((a, b) => a - b), items);
  });

  test('a seed outside [0, 2^32) is a programmer error', () => {
    assert.throws(() => new Prng(-1), /seed must be an integer/);
    assert.throws(() => new Prng(2 ** 32), /seed must be an integer/);
  });
});
