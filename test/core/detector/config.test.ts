/**
 * Goal: detector config validation reports every violated rule at once, and the frozen default
 * profiles are valid and keep the documented numbers.
 * Method: examples, one config breaking many rules at once, plus the profiles.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  PHI_ACCRUAL_DEFAULTS_LAN,
  PHI_ACCRUAL_DEFAULTS_LOCAL,
  PHI_SAMPLE_SIZE_LIMIT,
  TIMEOUT_DETECTOR_DEFAULTS_LAN,
  TIMEOUT_DETECTOR_DEFAULTS_LOCAL,
  validatePhiAccrualDetectorConfig,
  validateTimeoutDetectorConfig,
} from '../../../src/core/detector/index.js';

const fields = (problems: readonly { field: string }[]): string[] => problems.map((p) => p.field);

describe('detector: config', () => {
  test('the default profiles are valid, frozen, and hold the documented numbers', () => {
    for (const c of [TIMEOUT_DETECTOR_DEFAULTS_LAN, TIMEOUT_DETECTOR_DEFAULTS_LOCAL]) {
      assert.deepEqual(validateTimeoutDetectorConfig(c), []);
      assert.ok(Object.isFrozen(c));
    }
    for (const c of [PHI_ACCRUAL_DEFAULTS_LAN, PHI_ACCRUAL_DEFAULTS_LOCAL]) {
      assert.deepEqual(validatePhiAccrualDetectorConfig(c), []);
      assert.ok(Object.isFrozen(c));
    }
    assert.deepEqual({ ...TIMEOUT_DETECTOR_DEFAULTS_LAN },
      { heartbeatIntervalMs: 1000, timeoutMs: 3000 });
    assert.deepEqual({ ...TIMEOUT_DETECTOR_DEFAULTS_LOCAL },
      { heartbeatIntervalMs: 100, timeoutMs: 300 });
    assert.deepEqual({ ...PHI_ACCRUAL_DEFAULTS_LAN }, {
      threshold: 8, maxSampleSize: 1000, minStdDeviationMs: 100,
      acceptableHeartbeatPauseMs: 3000, firstHeartbeatEstimateMs: 1000,
    });
  });

  test('timeout: every broken rule is reported at once', () => {
    const problems = validateTimeoutDetectorConfig({
      heartbeatIntervalMs: Number.POSITIVE_INFINITY,
      timeoutMs: 0,
    });
    assert.deepEqual(fields(problems), ['heartbeatIntervalMs', 'timeoutMs']);
  });

  test('timeout: timeoutMs must exceed heartbeatIntervalMs', () => {
    assert.deepEqual(fields(validateTimeoutDetectorConfig({
      heartbeatIntervalMs: 1000, timeoutMs: 1000,
    })), ['timeoutMs,heartbeatIntervalMs']);
    assert.deepEqual(validateTimeoutDetectorConfig({
      heartbeatIntervalMs: 1000, timeoutMs: 1001,
    }), []);
  });

  test('phi: every broken rule is reported at once', () => {
    const problems = validatePhiAccrualDetectorConfig({
      threshold: -1,
      maxSampleSize: 1.5,
      minStdDeviationMs: 0,
      acceptableHeartbeatPauseMs: -0.5,
      firstHeartbeatEstimateMs: Number.NaN,
    });
    assert.deepEqual(fields(problems), [
      'threshold', 'maxSampleSize', 'minStdDeviationMs', 'acceptableHeartbeatPauseMs',
      'firstHeartbeatEstimateMs',
    ]);
  });

  test('phi: maxSampleSize must be an integer in [2, limit]; a zero pause is allowed', () => {
    const base = { ...PHI_ACCRUAL_DEFAULTS_LAN, acceptableHeartbeatPauseMs: 0 };
    assert.deepEqual(validatePhiAccrualDetectorConfig(base), []);
    for (const maxSampleSize of [1, 0, PHI_SAMPLE_SIZE_LIMIT + 1, Number.NaN]) {
      assert.deepEqual(fields(validatePhiAccrualDetectorConfig({ ...base, maxSampleSize })),
        ['maxSampleSize'], String(maxSampleSize));
    }
    assert.deepEqual(validatePhiAccrualDetectorConfig({ ...base, maxSampleSize: 2 }), []);
  });

  test('a field of the wrong type is reported, not thrown on', () => {
    const bad = { ...PHI_ACCRUAL_DEFAULTS_LAN, threshold: '8' as unknown as number };
    assert.deepEqual(fields(validatePhiAccrualDetectorConfig(bad)), ['threshold']);
  });
});
