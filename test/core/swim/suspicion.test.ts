/**
 * swim: suspicion. Goal: Lifeguard's dynamic suspicion timeout starts at the maximum, drops to
 * the minimum after k distinct confirmations, never counts an accuser twice, and never grows.
 * Method: direct calls, plus a property over random confirmation sequences.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { nodeId } from '../../../src/core/ids.js';
import { Suspicion, suspicionTimeoutMs } from '../../../src/core/swim/suspicion.js';

describe('swim: suspicion', () => {
  test('starts at max, reaches min after k confirmations, ignores repeats', () => {
    const s = new Suspicion(nodeId('a'), 2, 1000, 6000, 100);
    assert.equal(s.deadlineMs, 6100);
    assert.equal(s.confirm(nodeId('a')), false, 'the first accuser is not a confirmation');
    assert.equal(s.confirm(nodeId('b')), true);
    assert.ok(s.deadlineMs < 6100 && s.deadlineMs > 1100, `${s.deadlineMs}`);
    assert.equal(s.confirm(nodeId('b')), false);
    assert.equal(s.confirm(nodeId('c')), true);
    assert.equal(s.deadlineMs, 1100);
    assert.equal(s.confirm(nodeId('d')), false, 'no more confirmations once at the minimum');
    assert.deepEqual(s.evidence, ['a', 'b', 'c']);
  });

  test('with no confirmations wanted the timeout is the minimum', () => {
    assert.equal(suspicionTimeoutMs(0, 0, 800, 4800), 800);
    assert.equal(new Suspicion(nodeId('a'), 0, 800, 4800, 0).deadlineMs, 800);
  });

  test('the timeout never grows and stays within [min, max]', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 6 }), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 20 }),
      (wanted, accusers) => {
        const s = new Suspicion(nodeId('x0'), wanted, 1000, 6000, 0);
        let last = s.deadlineMs;
        for (const a of accusers) {
          s.confirm(nodeId(`x${a}`));
          assert.ok(s.deadlineMs <= last && s.deadlineMs >= 1000 && s.deadlineMs <= 6000);
          last = s.deadlineMs;
        }
      },
    ));
  });
});
