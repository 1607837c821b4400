/**
 * swim: awareness. Goal: Lifeguard's score stays in [0, max − 1] and scales durations by
 * (score + 1). Method: direct calls.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Awareness } from '../../../src/core/swim/awareness.js';

describe('swim: awareness', () => {
  test('the score is clamped to [0, max - 1] and scales durations by score + 1', () => {
    const awareness = new Awareness(8);
    awareness.applyDelta(-3);
    assert.equal(awareness.score, 0);
    assert.equal(awareness.scale(500), 500);
    awareness.applyDelta(3);
    assert.equal(awareness.scale(500), 2000);
    awareness.applyDelta(100);
    assert.equal(awareness.score, 7);
    assert.equal(awareness.scale(1000), 8000);
  });
});
