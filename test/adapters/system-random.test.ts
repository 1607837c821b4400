/**
 * adapters: system random. Goal: the OS-backed Random gives 32-bit unsigned integers that
 * vary, across refills of its buffered pool.
 * Method: draw more than two pools' worth and check range, variety and both halves of the range.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SystemRandom } from '../../src/adapters/system-random.js';

describe('adapters: system random', () => {
  test('draws are uint32 values that vary across pool refills', () => {
    const random = new SystemRandom();
    const draws = Array.from({ length: 1000 }, () => random.nextUint32());
    assert.ok(draws.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32));
    assert.ok(new Set(draws).size > 990, 'nearly all distinct');
    assert.ok(draws.some((x) => x >= 2 ** 31) && draws.some((x) => x < 2 ** 31));
  });
});
