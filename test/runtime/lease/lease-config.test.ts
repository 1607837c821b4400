/**
 * Goal: validateLeaseConfig accepts the defaults with both Raft profiles and reports every
 * broken rule at once, including the keep-alive linger's bound of one heartbeat interval.
 * Method: direct calls with valid and invalid configs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RAFT_DEFAULTS_LAN, RAFT_DEFAULTS_LOCAL } from '../../../src/core/raft/index.js';
import {
  LEASE_DEFAULTS, validateLeaseConfig, type LeaseConfig,
} from '../../../src/runtime/lease/index.js';

const fields = (config: LeaseConfig, raft = RAFT_DEFAULTS_LAN): string[] =>
  validateLeaseConfig(config, raft).map((p) => p.field);

describe('lease config: validation', () => {
  test('the defaults are valid with both Raft profiles, and so is a linger of a heartbeat', () => {
    assert.deepEqual(fields(LEASE_DEFAULTS), []);
    assert.deepEqual(fields(LEASE_DEFAULTS, RAFT_DEFAULTS_LOCAL), []);
    const { keepAliveLingerMs: _, ...withoutLinger } = LEASE_DEFAULTS;
    assert.deepEqual(fields(withoutLinger), []);
    assert.deepEqual(fields({ ...LEASE_DEFAULTS, keepAliveLingerMs: 100 }), []);
    assert.deepEqual(fields({ ...LEASE_DEFAULTS, keepAliveLingerMs: 50 }, RAFT_DEFAULTS_LOCAL),
      []);
  });

  test('a linger longer than a heartbeat is reported with every other problem', () => {
    assert.deepEqual(fields({ ...LEASE_DEFAULTS, checkpointIntervalMs: 0, retryDelayMs: 1.5,
      keepAliveLingerMs: 101 }),
    ['checkpointIntervalMs', 'retryDelayMs', 'keepAliveLingerMs,heartbeatIntervalMs',
      'checkpointIntervalMs,heartbeatIntervalMs']);
    assert.deepEqual(fields({ ...LEASE_DEFAULTS, keepAliveLingerMs: 100 }, RAFT_DEFAULTS_LOCAL),
      ['keepAliveLingerMs,heartbeatIntervalMs']);
  });

  test('a linger that is not a non-negative integer is reported', () => {
    for (const keepAliveLingerMs of [-1, 2.5, Number.NaN, '10' as unknown as number]) {
      assert.deepEqual(fields({ ...LEASE_DEFAULTS, keepAliveLingerMs }), ['keepAliveLingerMs'],
        String(keepAliveLingerMs));
    }
  });

  test('waitersMax must be a positive integer; absent means the documented default', () => {
    const { waitersMax: _, ...withoutBound } = LEASE_DEFAULTS;
    assert.deepEqual(fields(withoutBound), []);
    for (const waitersMax of [0, -3, 1.5, Number.NaN]) {
      assert.deepEqual(fields({ ...LEASE_DEFAULTS, waitersMax }), ['waitersMax'],
        String(waitersMax));
    }
  });
});
