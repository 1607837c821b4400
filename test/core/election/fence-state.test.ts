/**
 * Goal: the fence accepts a token iff it is not lower than every token accepted before, and its
 * highest only grows. Method: examples, then a fast-check property against a reference model.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FenceState } from '../../../src/core/election/index.js';

describe('election: fence state', () => {
  test('a lower token is stale; an equal or higher one is accepted', () => {
    const fence = new FenceState();
    assert.deepEqual(fence.offer(7), { kind: 'accepted', token: 7, highestBefore: 0 });
    assert.deepEqual(fence.offer(7), { kind: 'accepted', token: 7, highestBefore: 7 });
    assert.deepEqual(fence.offer(5), { kind: 'stale', token: 5, highest: 7 });
    assert.equal(fence.highest, 7);
  });

  test('check decides without raising the highest', () => {
    const fence = new FenceState(3);
    assert.equal(fence.check(9).kind, 'accepted');
    assert.equal(fence.highest, 3);
  });

  test('a token that is not a non-negative safe integer is refused loudly', () => {
    assert.throws(() => new FenceState().offer(-1), /non-negative safe integer, got -1/);
    assert.throws(() => new FenceState().offer(1.5), /got 1.5/);
  });

  test('property: accepted iff not below the maximum accepted so far', () => {
    fc.assert(fc.property(fc.array(fc.nat({ max: 50 }), { maxLength: 60 }), (tokens) => {
      const fence = new FenceState();
      let max = 0;
      for (const token of tokens) {
        const decision = fence.offer(token);
        assert.equal(decision.kind === 'accepted', token >= max);
        max = Math.max(max, decision.kind === 'accepted' ? token : max);
        assert.equal(fence.highest, max);
      }
    }));
  });
});
