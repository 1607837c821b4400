/**
 * The on-disk form of a persisted generation: a fixed 20-byte record with a checksum, so that a
 * torn or corrupted file is recognised instead of being read as a wrong generation.
 *
 * Layout (big-endian):
 *   bytes 0-3    magic "CGEN"
 *   byte  4      format version (1)
 *   bytes 5-7    zero
 *   bytes 8-15   generation, unsigned 64-bit (only safe integers, < 2^53, are valid)
 *   bytes 16-19  CRC-32C of bytes 0-15
 */
import { assert } from '../assert.js';
import { crc32c } from '../checksum.js';
import { isValidGeneration } from './generation-clock.js';

/** Size of an encoded record. Unit: bytes. */
export const GENERATION_RECORD_SIZE_BYTES = 20;
const MAGIC = [0x43, 0x47, 0x45, 0x4e] as const; // "CGEN"
const FORMAT_VERSION = 1;
const CHECKSUMMED_BYTES = 16;

/** A decoded record, or why the bytes are not one. */
export type GenerationRecordDecoded =
  | { readonly kind: 'ok'; readonly generation: number }
  | { readonly kind: 'corrupt'; readonly reason: string };

/** Encodes `generation` (a safe integer >= 0). */
export function encodeGenerationRecord(generation: number): Uint8Array {
  assert(isValidGeneration(generation),
    () => `generation must be a safe integer >= 0: ${String(generation)}`);
  const bytes = new Uint8Array(GENERATION_RECORD_SIZE_BYTES);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  bytes[4] = FORMAT_VERSION;
  view.setUint32(8, Math.floor(generation / 0x1_0000_0000));
  view.setUint32(12, generation % 0x1_0000_0000);
  view.setUint32(16, crc32c(bytes, 0, CHECKSUMMED_BYTES));
  // Check on both sides: what we write must read back as what we meant.
  const check = decodeGenerationRecord(bytes);
  assert(check.kind === 'ok' && check.generation === generation,
    () => `generation record does not round-trip: ${generation} -> ${JSON.stringify(check)}`);
  return bytes;
}

/** Decodes a record; never throws, whatever the bytes. */
export function decodeGenerationRecord(bytes: Uint8Array): GenerationRecordDecoded {
  if (bytes.length !== GENERATION_RECORD_SIZE_BYTES) {
    return corrupt(`expected ${GENERATION_RECORD_SIZE_BYTES} bytes, found ${bytes.length}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const storedChecksum = view.getUint32(16);
  const computedChecksum = crc32c(bytes, 0, CHECKSUMMED_BYTES);
  if (storedChecksum !== computedChecksum) {
    return corrupt(`checksum mismatch: stored ${hex(storedChecksum)}, `
      + `computed ${hex(computedChecksum)}`);
  }
  if (MAGIC.some((b, i) => bytes[i] !== b)) return corrupt('bad magic (not a generation record)');
  if (bytes[4] !== FORMAT_VERSION) return corrupt(`unknown format version ${bytes[4]}`);
  if (bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) return corrupt('reserved bytes not zero');
  const high = view.getUint32(8);
  const low = view.getUint32(12);
  const generation = high * 0x1_0000_0000 + low;
  if (!isValidGeneration(generation)) {
    return corrupt(`generation out of range: high word ${hex(high)}`);
  }
  return { kind: 'ok', generation };
}

function corrupt(reason: string): GenerationRecordDecoded {
  return { kind: 'corrupt', reason };
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}
