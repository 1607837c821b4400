/**
 * checksum: CRC-32C. Goal: the table-driven function gives the published check values and
 * continues across pieces. Method: known vectors (the "123456789" check value of the CRC
 * catalogue, RFC 3720's iSCSI test patterns) and a property comparing piecewise with whole.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../src/core/checksum.js';

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('checksum: crc32c', () => {
  test('the catalogue check value: "123456789" gives 0xe3069283', () => {
    assert.equal(crc32c(ascii('123456789')), 0xe3069283);
  });

  test('RFC 3720 B.4 vectors: 32 zeros, 32 ones, ascending and descending bytes', () => {
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
    assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
    assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e);
    assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c);
  });

  test('empty input gives 0, and a range checks only its bytes', () => {
    assert.equal(crc32c(new Uint8Array(0)), 0);
    const padded = ascii('xx123456789yy');
    assert.equal(crc32c(padded, 2, 11), 0xe3069283);
  });

  test('a checksum continued over pieces equals the checksum of the whole', () => {
    fc.assert(fc.property(fc.uint8Array(), fc.uint8Array(), (a, b) => {
      const whole = new Uint8Array([...a, ...b]);
      assert.equal(crc32c(b, 0, b.length, crc32c(a)), crc32c(whole));
    }));
  });

  test('any single flipped bit changes the checksum', () => {
    const bytesArbitrary = fc.uint8Array({ minLength: 1, maxLength: 64 });
    fc.assert(fc.property(bytesArbitrary, fc.nat(), (bytes, bit) => {
      const flipped = bytes.slice();
      const at = bit % (bytes.length * 8);
      flipped[at >> 3]! ^= 1 << (at & 7);
      assert.notEqual(crc32c(flipped), crc32c(bytes));
    }));
  });
});
