/**
 * swim: config. Goal: the profiles are valid, the formulas give memberlist's numbers, and the
 * validator lists every broken rule at once. Method: direct calls on literal configs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  SWIM_DEFAULTS_LAN, SWIM_DEFAULTS_LOCAL, swimPushPullIntervalMs, swimRetransmitLimit,
  swimStableAfterMs, swimSuspicionConfirmationsWanted, swimSuspicionMaxMs, swimSuspicionMinMs,
  validateSwimConfig, type SwimConfig,
} from '../../../src/core/swim/index.js';

describe('swim: config', () => {
  test('the LAN and LOCAL profiles are valid and frozen', () => {
    assert.deepEqual(validateSwimConfig(SWIM_DEFAULTS_LAN), []);
    assert.deepEqual(validateSwimConfig(SWIM_DEFAULTS_LOCAL), []);
    assert.ok(Object.isFrozen(SWIM_DEFAULTS_LAN));
    assert.ok(Object.isFrozen(SWIM_DEFAULTS_LOCAL));
  });

  test('suspicion timeouts follow suspicionMult × max(1, log10 N) × probeInterval', () => {
    const lan = SWIM_DEFAULTS_LAN;
    assert.equal(swimSuspicionMinMs(lan, 1), 4000);
    assert.equal(swimSuspicionMinMs(lan, 10), 4000);
    assert.equal(swimSuspicionMinMs(lan, 1000), 12_000);
    assert.equal(swimSuspicionMaxMs(lan, 1000), 72_000);
    assert.equal(swimSuspicionMaxMs({ ...lan, lifeguard: false }, 1000), 12_000);
    assert.equal(swimSuspicionConfirmationsWanted(lan, 10), 2);
    assert.equal(swimSuspicionConfirmationsWanted(lan, 3), 0);
  });

  test('retransmits grow with log10(N + 1) and push-pull stretches above 32 members', () => {
    assert.equal(swimRetransmitLimit(SWIM_DEFAULTS_LAN, 9), 4);
    assert.equal(swimRetransmitLimit(SWIM_DEFAULTS_LAN, 10), 8);
    assert.equal(swimRetransmitLimit(SWIM_DEFAULTS_LAN, 1000), 16);
    assert.equal(swimPushPullIntervalMs(SWIM_DEFAULTS_LAN, 32), 30_000);
    assert.equal(swimPushPullIntervalMs(SWIM_DEFAULTS_LAN, 1000), 30_000 * 6);
  });

  test('the stable-after time never drops below suspicionMax + 4 probe intervals', () => {
    assert.equal(swimStableAfterMs(SWIM_DEFAULTS_LAN, 5), 30_000);
    assert.equal(swimStableAfterMs(SWIM_DEFAULTS_LAN, 1000), 72_000 + 4000);
  });

  test('every broken rule is reported at once', () => {
    const bad = {
      ...SWIM_DEFAULTS_LAN,
      probeIntervalMs: 100,
      probeTimeoutMs: 80,
      indirectChecks: -1,
      suspicionMult: 1.5,
      piggybackMax: 1000,
      lifeguard: 'yes' as unknown as boolean,
      splitBrainStrategy: 'keep-everyone' as SwimConfig['splitBrainStrategy'],
      deadRetainMs: 10,
      gossipIntervalMs: Number.NaN,
    };
    const fields = validateSwimConfig(bad).map((p) => p.field).sort();
    assert.deepEqual(fields, [
      'deadRetainMs,reconnectIntervalMs,gossipToTheDeadMs',
      'gossipIntervalMs',
      'indirectChecks',
      'lifeguard',
      'piggybackMax',
      'probeTimeoutMs,probeIntervalMs',
      'splitBrainStrategy',
      'suspicionMult',
    ]);
  });

  test('static-quorum needs a quorum size of at least 1', () => {
    const config: SwimConfig = { ...SWIM_DEFAULTS_LAN, splitBrainStrategy: 'static-quorum' };
    assert.deepEqual(validateSwimConfig(config).map((p) => p.field), ['staticQuorumSize']);
    assert.deepEqual(validateSwimConfig({ ...config, staticQuorumSize: 3 }), []);
  });
});
