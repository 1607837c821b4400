/**
 * sim: scenarios: gossip: rate intervals. Goal: Garwood's Poisson intervals and the
 * conditional binomial interval of a rate ratio give the textbook figures, including for zero
 * counts. Method: direct calls against tabulated values.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  poissonMeanInterval, rateInterval, rateRatioInterval,
} from '../../../../src/sim/scenarios/gossip/rate-intervals.js';

const near = (actual: number, expected: number, what: string): void =>
  assert.ok(Math.abs(actual - expected) < 1e-3 * Math.max(1, expected), `${what}: ${actual}`);

describe('sim: scenarios: gossip: rate intervals', () => {
  test("Poisson means (Garwood's table)", () => {
    const zero = poissonMeanInterval(0);
    near(zero.low, 0, '0 low');
    near(zero.high, 3.689, '0 high');
    const one = poissonMeanInterval(1);
    near(one.low, 0.0253, '1 low');
    near(one.high, 5.572, '1 high');
    const ten = poissonMeanInterval(10);
    near(ten.low, 4.795, '10 low');
    near(ten.high, 18.39, '10 high');
  });

  test('rates per 100 member-hours scale with the exposure', () => {
    const r = rateInterval(10, 50, 100);
    near(r.low, 9.59, 'low');
    near(r.high, 36.78, 'high');
  });

  test('the ratio of two rates: equal counts straddle 1; zero on top gives an open bound', () => {
    const even = rateRatioInterval(20, 10, 20, 10);
    assert.ok(even.low < 1 && even.high > 1, JSON.stringify(even));
    const none = rateRatioInterval(40, 10, 0, 10);
    assert.equal(none.high, Infinity);
    assert.ok(none.low > 8, JSON.stringify(none));
    const exposure = rateRatioInterval(20, 20, 20, 10);
    assert.ok(exposure.low < 0.5 && exposure.high > 0.5, JSON.stringify(exposure));
  });
  test('large counts (a Lifeguard-off storm) get an interval around the count', () => {
    // Seed 3 at 1,000 members: 6,992 lives ended over 37.76 member-hours; the normal
    // approximation k ± 1.96 √k is within a unit of Garwood's bounds at this size.
    const mean = poissonMeanInterval(6992);
    assert.ok(Math.abs(mean.low - (6992 - 1.96 * Math.sqrt(6992))) < 2, JSON.stringify(mean));
    assert.ok(Math.abs(mean.high - (6992 + 1.96 * Math.sqrt(6992))) < 2, JSON.stringify(mean));
    const rate = rateInterval(6992, 37.76, 100);
    assert.ok(rate.low < 18517.5 && rate.high > 18517.5, JSON.stringify(rate));
  });
});
