/**
 * Goal: the interval window's running mean and variance equal a from-scratch computation over
 * the latest `capacity` samples, however long it runs (the sums are refreshed as the ring wraps).
 * Method: fast-check over random capacities and sample sequences, compared with a naive
 * two-pass computation; one long run of large, nearly equal samples for numerical drift.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { IntervalWindow } from '../../../src/core/detector/interval-window.js';

function naive(samples: readonly number[]): { mean: number; variance: number } {
  const mean = samples.reduce((s, x) => s + x, 0) / samples.length;
  const variance = samples.reduce((s, x) => s + (x - mean) ** 2, 0) / samples.length;
  return { mean, variance };
}

describe('detector: interval window', () => {
  test('mean and variance match a two-pass computation over the latest samples', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.double({ min: 0, max: 10_000, noNaN: true }), { minLength: 1, maxLength: 100 }),
      (capacity, samples) => {
        const window = new IntervalWindow(capacity, 1000);
        for (const s of samples) window.add(s);
        const kept = samples.slice(-capacity);
        assert.deepEqual(window.toArray(), kept);
        assert.equal(window.count, kept.length);
        const expected = naive(kept);
        assert.ok(Math.abs(window.meanMs - expected.mean) < 1e-6);
        assert.ok(Math.abs(window.varianceMs2 - expected.variance) < 1e-3,
          `${window.varianceMs2} vs ${expected.variance}`);
        assert.ok(window.varianceMs2 >= 0);
      },
    ), { numRuns: 300 });
  });

  test('no drift after a million samples near a large value', () => {
    const window = new IntervalWindow(1000, 1000);
    let x = 0;
    for (let i = 0; i < 1_000_000; i++) {
      x = 1e6 + (i % 7) * 0.1;
      window.add(x);
    }
    const expected = naive(window.toArray());
    assert.ok(Math.abs(window.meanMs - expected.mean) < 1e-6);
    assert.ok(Math.abs(window.varianceMs2 - expected.variance) < 1e-6,
      `${window.varianceMs2} vs ${expected.variance}`);
  });

  test('an empty window reports 0; equal samples report std dev exactly 0', () => {
    const window = new IntervalWindow(4, 1000);
    assert.equal(window.meanMs, 0);
    assert.equal(window.stdDeviationMs, 0);
    for (let i = 0; i < 9; i++) window.add(1000);
    assert.equal(window.stdDeviationMs, 0);
    assert.equal(window.meanMs, 1000);
  });
});
