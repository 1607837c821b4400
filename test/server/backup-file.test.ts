/**
 * server: backup file — the format of `conclave snapshot save`: a backup fed in any pieces
 * reads back the same; every single flipped byte, every cut, and bytes after the end are
 * refused with a reason, never accepted. Method: fast-check over data and piece sizes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../src/core/checksum.js';
import {
  BackupReader, encodeBackupEnd, encodeBackupHeader, encodeFrameLength,
} from '../../src/server/backup-file.js';

const HEADER = { clusterId: '0123456789abcdef', index: 42, term: 3, revision: 17, keys: 5 };

function backupOf(data: Uint8Array, frameBytes: number): Uint8Array {
  const parts: Uint8Array[] = [encodeBackupHeader(HEADER)];
  for (let at = 0; at < data.length; at += frameBytes) {
    const frame = data.subarray(at, Math.min(data.length, at + frameBytes));
    parts.push(encodeFrameLength(frame.length), frame);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, encodeBackupEnd(data.length, crc32c(body))]);
}

function read(bytes: Uint8Array, pieceBytes: number): ReturnType<BackupReader['finish']> {
  const reader = new BackupReader(true);
  for (let at = 0; at < bytes.length; at += pieceBytes) {
    const problem = reader.feed(bytes.subarray(at, at + pieceBytes));
    if (problem !== undefined) return problem;
  }
  const summary = reader.finish();
  if (typeof summary !== 'string') {
    assert.equal(Buffer.from(reader.snapshotData()).length, summary.dataBytes);
  }
  return summary;
}

describe('server: backup file', () => {
  test('reads back what was written, in any pieces', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 3000 }), fc.integer({ min: 1, max: 700 }),
      fc.integer({ min: 1, max: 900 }), (data, frameBytes, pieceBytes) => {
        const summary = read(backupOf(data, frameBytes), pieceBytes);
        assert.ok(typeof summary !== 'string', String(summary));
        assert.deepEqual({ ...summary, checksum: '', fileBytes: 0 }, { ...HEADER,
          dataBytes: data.length, checksum: '', fileBytes: 0 });
      }));
  });

  test('a flipped byte, a cut or trailing bytes are refused with a reason', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 2000 }),
      fc.nat(), fc.integer({ min: 1, max: 255 }), (data, where, mask) => {
        const good = backupOf(data, 256);
        const flipped = Uint8Array.from(good);
        flipped[where % good.length]! ^= mask;
        assert.equal(typeof read(flipped, 100), 'string');
        assert.match(String(read(good.subarray(0, where % good.length), 100)), /truncated/);
        assert.equal(typeof read(Buffer.concat([good, Buffer.from([0])]), 100), 'string');
      }));
  });
});
