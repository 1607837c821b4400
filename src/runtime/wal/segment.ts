/**
 * Segment files: their names, and reading one into records. A segment is named after its
 * sequence number, zero-padded so that name order is sequence order: `wal-0000000001.log`.
 */
import { RECORD_HEADER_BYTES, readRecord, type WalRecord } from './record.js';
import { walError, type WalError } from './wal-error.js';

const SEGMENT_NAME = /^wal-(\d{10})\.log$/;
export const SEGMENT_SEQUENCE_MAX = 9_999_999_999;

export function segmentName(sequence: number): string {
  return `wal-${sequence.toString().padStart(10, '0')}.log`;
}

/** The sequence number in a segment's name, or undefined for any other file. */
export function segmentSequence(name: string): number | undefined {
  const match = SEGMENT_NAME.exec(name);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

export interface PositionedRecord {
  readonly record: WalRecord;
  /** Where the record starts in its file. Unit: bytes. */
  readonly offsetBytes: number;
}

export interface SegmentScan {
  /** The intact records, in file order. */
  readonly records: readonly PositionedRecord[];
  /** Length of the intact prefix. Unit: bytes. */
  readonly validBytes: number;
  /** Set when the file ends in a torn record: where it starts and what was wrong. */
  readonly torn: { readonly offsetBytes: number; readonly reason: string } | undefined;
}

/**
 * Reads `bytes` (the file `name`) as records. A bad record is a torn tail, and ends the scan,
 * only when it is in the last segment and no intact record follows it anywhere: a crash leaves
 * a prefix of what was written (possibly cut inside a record, possibly followed by zeros on a
 * real disk), never an intact record after a damaged one. Anything else is corruption.
 *
 * Known limits, both inherent to telling a torn write from damage by looking at the bytes:
 * - Damage to the very last record of the log reads as a torn write here. Recovery then checks
 *   the manifest (manifest.ts): when it claims those bytes were synced, the log refuses to
 *   open. Only a claim lost with a power loss (they are not synced on their own) leaves the
 *   last batches before it unprotected. Any damage before the last record (every byte,
 *   including length fields) is caught here, because intact records follow it.
 * - The search for a following intact record tries every byte offset, so entry data that itself
 *   holds a byte-exact, checksummed record, cut by a crash, reads as corruption: the log refuses
 *   to open (it never loses data). Only crafted data can do that.
 */
export function scanSegment(
  name: string,
  bytes: Uint8Array,
  isLast: boolean,
  recordBytesMax: number,
): SegmentScan | WalError {
  const records: PositionedRecord[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const read = readRecord(bytes, offset, recordBytesMax);
    if (read.kind === 'ok') {
      records.push({ record: read.record, offsetBytes: offset });
      offset = read.endOffset;
      continue;
    }
    if (read.kind === 'malformed') return walError('corrupt-record', name, offset, read.reason);
    if (!isLast) {
      return walError('corrupt-record', name, offset,
        `${read.reason}, in a segment that is not the last one`);
    }
    const next = intactRecordAfter(bytes, offset + 1, recordBytesMax);
    if (next !== undefined) {
      return walError('corrupt-record', name, offset,
        `${read.reason}, followed by an intact record at byte ${next}`);
    }
    return { records, validBytes: offset, torn: { offsetBytes: offset, reason: read.reason } };
  }
  return { records, validBytes: offset, torn: undefined };
}

/** The first offset at or after `from` where an intact record starts, if any. */
function intactRecordAfter(
  bytes: Uint8Array,
  from: number,
  recordBytesMax: number,
): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = from; at + RECORD_HEADER_BYTES <= bytes.length; at++) {
    // Cheap filters first (zeros, impossible lengths), so a long torn tail scans quickly.
    const length = view.getUint32(at, true);
    if (length === 0 || length > bytes.length - at) continue;
    if (readRecord(bytes, at, recordBytesMax).kind === 'ok') return at;
  }
  return undefined;
}
