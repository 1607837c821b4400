/**
 * sim: scenarios: gossip: the false-dead bound. Goal: the model's pieces compute what
 * docs/gossip.md states (Erlang latency windows, binomial confirmations, the Poisson quantile),
 * loss alone allows no false death at the sizes the scenario runs, a member whose own links
 * lose half its messages or a pause longer than the suspicion timeout is allowed one, and the
 * bound grows with the exposure. Method: direct calls on literal models.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../../src/core/ids.js';
import { SWIM_DEFAULTS_LOCAL, swimSuspicionMinMs } from '../../../../src/core/swim/index.js';
import {
  binomialAtLeast, falseDeadBound, latencyWithin, poissonUpperQuantile, type FalseDeadModel,
} from '../../../../src/sim/scenarios/gossip/false-dead-bound.js';
import { NETWORK_FAULTS_NONE } from '../../../../src/sim/sim-network.js';

function model(members: number, lossRate: number, overrides: Partial<FalseDeadModel> = {}):
FalseDeadModel {
  return {
    config: SWIM_DEFAULTS_LOCAL, members,
    stretches: [{ durationMs: 120_000, faults: { ...NETWORK_FAULTS_NONE, lossRate } }],
    badLinks: [], memberFaults: [], ...overrides,
  };
}

describe('sim: scenarios: gossip: the false-dead bound', () => {
  test('the distributions: Erlang windows, binomial tails, the Poisson quantile', () => {
    const f = { ...NETWORK_FAULTS_NONE, latencyMsMin: 1, latencyMsMeanExtra: 10 };
    assert.equal(latencyWithin(f, 2, 2), 0, 'below the floor of two latencies');
    // One exponential: P(X ≤ 10) = 1 − e^-1.
    assert.ok(Math.abs(latencyWithin(f, 1, 11) - (1 - Math.exp(-1))) < 1e-12);
    assert.ok(latencyWithin(f, 4, 100) < latencyWithin(f, 2, 100));
    assert.ok(Math.abs(binomialAtLeast(10, 0.5, 1) - (1 - 0.5 ** 10)) < 1e-12);
    assert.equal(binomialAtLeast(3, 0.2, 4), 0);
    assert.equal(binomialAtLeast(3, 1, 2), 1);
    assert.equal(poissonUpperQuantile(0, 1e-6), 0);
    assert.equal(poissonUpperQuantile(1e-9, 1e-6), 0);
    assert.equal(poissonUpperQuantile(1e-3, 1e-6), 1);
    const n = poissonUpperQuantile(10, 1e-6);
    assert.ok(n > 20 && n < 40, `${n}`);
  });

  test('loss alone allows no false death, at 16 to 1,000 members, up to 20 % loss', () => {
    for (const members of [16, 100, 1000]) {
      for (const lossRate of [0.01, 0.05, 0.2]) {
        for (const lifeguard of [true, false]) {
          const bound = falseDeadBound(model(members, lossRate, {
            config: { ...SWIM_DEFAULTS_LOCAL, lifeguard },
          }));
          assert.equal(bound.allowed, 0, `${members} members, loss ${lossRate}: ${bound.expected}`);
        }
      }
    }
  });

  test('a member losing half its messages, or paused past the timeout, may die', () => {
    const lossy = falseDeadBound(model(100, 0.01, {
      badLinks: [{ member: nodeId('n9'), lossRateExtra: 0.5 }],
    }));
    assert.ok(lossy.allowed >= 1, JSON.stringify(lossy));
    const minMs = swimSuspicionMinMs(SWIM_DEFAULTS_LOCAL, 100);
    const pause = (durationMs: number): number => falseDeadBound(model(100, 0.01, {
      memberFaults: [{ kind: 'pause', member: nodeId('n9'), durationMs }],
    })).allowed;
    assert.equal(pause(minMs / 4), 0);
    assert.equal(pause(2 * minMs), 1);
  });

  test('the bound grows with the exposure (longer bursts, more loss)', () => {
    const burst = (members: number, lossRate: number, durationMs: number): number =>
      falseDeadBound(model(members, 0.01, {
        stretches: [{ durationMs, faults: { ...NETWORK_FAULTS_NONE, lossRate } }],
      })).expected;
    assert.ok(burst(100, 0.6, 10_000) < burst(100, 0.7, 10_000));
    assert.ok(burst(100, 0.6, 10_000) < burst(100, 0.6, 20_000));
  });
});
