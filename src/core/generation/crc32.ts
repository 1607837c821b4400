/**
 * CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial value and final xor 0xFFFFFFFF),
 * the checksum of zlib, gzip and PNG, so a record can be checked with standard tools.
 * Check value: crc32("123456789") = 0xCBF43926.
 */

/** One entry per byte value: the CRC of that byte alone (built once, never modified). */
const CRC32_TABLE: Uint32Array = buildTable();

function buildTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** CRC-32 of `bytes`, as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc = (CRC32_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}
