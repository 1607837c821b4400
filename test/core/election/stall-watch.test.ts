/**
 * Goal: a tick later than due by more than stallMsMax is a stall; on-time ticks are not.
 * Method: feed tick times by hand.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StallWatch } from '../../../src/core/election/index.js';

describe('election: stall watch', () => {
  test('ticks on time, or late by at most the bound, are fine; a longer gap is a stall', () => {
    const watch = new StallWatch({ tickIntervalMs: 100, stallMsMax: 250 }, 0);
    assert.deepEqual(watch.tick(100), { kind: 'ok' });
    assert.deepEqual(watch.tick(450), { kind: 'ok' });
    assert.deepEqual(watch.tick(2_000), { kind: 'stalled', lateMs: 1_450 });
    assert.deepEqual(watch.tick(2_100), { kind: 'ok' });
  });

  test('non-positive settings fail fast', () => {
    assert.throws(() => new StallWatch({ tickIntervalMs: 0, stallMsMax: 1 }, 0), /positive/);
  });
});
