/**
 * Goal: the on-disk generation record round-trips every valid generation, and every damaged
 * record (any bit flipped, any length) is reported as corrupt, never misread and never thrown on.
 * Method: fast-check over generations, bit positions and random bytes (the CRC-32C itself is
 * tested in test/core/checksum.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  GENERATION_RECORD_SIZE_BYTES,
  decodeGenerationRecord,
  encodeGenerationRecord,
} from '../../../src/core/generation/index.js';
import { crc32c } from '../../../src/core/checksum.js';

describe('generation: record', () => {
  const generations = fc.oneof(
    fc.nat({ max: 1000 }),
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.constant(Number.MAX_SAFE_INTEGER),
  );

  test('every valid generation round-trips', () => {
    fc.assert(fc.property(generations, (g) => {
      const bytes = encodeGenerationRecord(g);
      assert.equal(bytes.length, GENERATION_RECORD_SIZE_BYTES);
      assert.deepEqual(decodeGenerationRecord(bytes), { kind: 'ok', generation: g });
    }), { numRuns: 300 });
  });

  test('any single flipped bit is reported as corrupt', () => {
    fc.assert(fc.property(generations, fc.nat({ max: GENERATION_RECORD_SIZE_BYTES * 8 - 1 }),
      (g, bit) => {
        const bytes = encodeGenerationRecord(g);
        bytes[bit >> 3] = (bytes[bit >> 3] as number) ^ (1 << (bit & 7));
        return decodeGenerationRecord(bytes).kind === 'corrupt';
      }), { numRuns: 500 });
  });

  test('truncated, extended and empty records are corrupt with the length in the reason', () => {
    const bytes = encodeGenerationRecord(42);
    const short = decodeGenerationRecord(bytes.subarray(0, 19));
    assert.deepEqual(short, { kind: 'corrupt', reason: 'expected 20 bytes, found 19' });
    assert.equal(decodeGenerationRecord(new Uint8Array([...bytes, 0])).kind, 'corrupt');
    assert.equal(decodeGenerationRecord(new Uint8Array(0)).kind, 'corrupt');
  });

  test('a well-checksummed record of a generation beyond 2^53 is corrupt, not misread', () => {
    const bytes = encodeGenerationRecord(0);
    const view = new DataView(bytes.buffer);
    view.setUint32(8, 0x0020_0000); // high word 2^21: generation 2^53
    view.setUint32(16, crc32c(bytes, 0, 16));
    const decoded = decodeGenerationRecord(bytes);
    assert.equal(decoded.kind, 'corrupt');
    assert.match(decoded.kind === 'corrupt' ? decoded.reason : '', /out of range/);
  });

  test('random bytes never throw and are almost never accepted', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 0, maxLength: 40 }), (bytes) => {
      const decoded = decodeGenerationRecord(bytes);
      return decoded.kind === 'corrupt' || isValidRecord(bytes);
    }), { numRuns: 500 });
  });

  test('encoding an invalid generation is a programmer error', () => {
    assert.throws(() => encodeGenerationRecord(-1), /safe integer/);
    assert.throws(() => encodeGenerationRecord(0.5), /safe integer/);
  });
});

function isValidRecord(bytes: Uint8Array): boolean {
  const decoded = decodeGenerationRecord(bytes);
  return decoded.kind === 'ok'
    && encodeGenerationRecord(decoded.generation).every((b, i) => b === bytes[i]);
}
