/**
 * Goal: the store measures keys and values exactly as UTF-8 and spots lone surrogates.
 * Method: fast-check compares utf8ByteLength with TextEncoder over arbitrary UTF-16 strings,
 * plus the boundary code points; utf8ByteLengthExceeds agrees with counting, around the bounds
 * where its shortcuts stop.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  isWellFormed, utf8ByteLength, utf8ByteLengthExceeds,
} from '../../../src/core/kv/text.js';

const encoder = new TextEncoder();

describe('kv: text', () => {
  test('utf8ByteLength equals the length TextEncoder produces', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }),
      (binary, graphemes) => {
        for (const text of [binary, graphemes, `${binary}\ud83d`]) {
          assert.equal(utf8ByteLength(text), encoder.encode(text).length);
        }
      }), { numRuns: 2_000 });
    for (const [text, bytes] of [['', 0], ['\u007f', 1], ['\u0080', 2], ['\u07ff', 2],
      ['\u0800', 3], ['\uffff', 3], ['😀', 4], ['\udc00\ud800', 6]] as const) {
      assert.equal(utf8ByteLength(text), bytes, JSON.stringify(text));
    }
  });

  test('isWellFormed rejects exactly the strings with a lone surrogate', () => {
    assert.equal(isWellFormed('a😀b'), true);
    assert.equal(isWellFormed('a\ud83d'), false);
    assert.equal(isWellFormed('\ude00b'), false);
    assert.equal(isWellFormed('\ude00\ud83d'), false);
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => {
      const roundTrip = new TextDecoder().decode(encoder.encode(text));
      assert.equal(isWellFormed(text), roundTrip === text);
    }), { numRuns: 2_000 });
  });

  test('utf8ByteLengthExceeds agrees with counting the bytes, at every bound', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.nat(130),
      (text, bytesMax) => {
        assert.equal(utf8ByteLengthExceeds(text, bytesMax), utf8ByteLength(text) > bytesMax);
      }), { numRuns: 5_000 });
    for (const [text, bytesMax, exceeds] of [['😀😀', 8, false], ['😀😀', 7, true],
      ['\u0800', 2, true], ['\u0800', 3, false], ['ab', 2, false], ['ab', 1, true]] as const) {
      assert.equal(utf8ByteLengthExceeds(text, bytesMax), exceeds, `${text} ${bytesMax}`);
    }
  });
});
