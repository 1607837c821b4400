/**
 * The write-ahead log's configuration: how big a segment file grows, how big one record may
 * be, and how big the manifest grows before it is rewritten. All bound memory: recovery reads
 * a whole segment (and the manifest) at once, and never allocates for a record longer than
 * `recordBytesMax`, whatever length a damaged file claims.
 */
import type { ConfigProblem } from '../../core/config.js';
import { ENTRIES_HEADER_BYTES, ENTRY_HEADER_BYTES, RECORD_HEADER_BYTES } from './record.js';

export interface WalConfig {
  /**
   * A segment file is closed and a new one started once it holds this many bytes. Checked
   * before each sync batch, so a segment exceeds it by at most one batch. Smaller segments make
   * recovery read less at once and let compaction free space sooner; larger ones mean fewer
   * files and fewer directory syncs (each new segment costs one).
   * Unit: bytes. Default: 64 MiB, as etcd's WAL: a few seconds of a busy node's writes, and
   * well below the 2 GiB a single read can return.
   * Range: 1 KiB to 1 GiB.
   */
  readonly segmentBytesMax: number;
  /**
   * The largest record the log writes or accepts when reading: the length field of each record
   * is checked against it before anything is allocated, so a damaged length cannot exhaust
   * memory. Entries appended together are split into records of at most this size; one entry's
   * data must fit in one record (see `entryDataBytesMax`).
   * Unit: bytes. Default: 4 MiB, above etcd's default 1.5 MiB request limit with room for
   * framing, and small enough that a bad length costs little.
   * Range: 1 KiB to 256 MiB.
   */
  readonly recordBytesMax: number;
  /**
   * The manifest (manifest.ts: one 24-byte claim appended per batch, saying how far the last
   * segment was synced) is rewritten to a single claim once it holds this many bytes; the
   * rewrite costs two syncs, off the write path. Smaller means more frequent rewrites; larger
   * means more to read at recovery (it is read whole).
   * Unit: bytes. Default: 256 KiB: about 11,000 batches between rewrites (tens of seconds at
   * full speed, so the rewrite's syncs cost nothing measurable).
   * Range: 96 bytes (four records: a rewrite leaves two, the newest claim and floor) to
   * 64 MiB.
   */
  readonly manifestBytesMax: number;
}

export const WAL_DEFAULTS: WalConfig = Object.freeze({
  segmentBytesMax: 64 * 1024 * 1024,
  recordBytesMax: 4 * 1024 * 1024,
  manifestBytesMax: 256 * 1024,
});

const SEGMENT_BYTES_MIN = 1024;
const SEGMENT_BYTES_LIMIT = 1024 * 1024 * 1024;
const RECORD_BYTES_MIN = 1024;
const RECORD_BYTES_LIMIT = 256 * 1024 * 1024;
const MANIFEST_BYTES_MIN = 96;
const MANIFEST_BYTES_LIMIT = 64 * 1024 * 1024;

/** Every rule `config` breaks, all at once; empty when it is valid. */
export function validateWalConfig(config: WalConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const range = (field: keyof WalConfig, min: number, max: number): void => {
    const value = config[field];
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push({ field, value, rule: `must be an integer from ${min} to ${max} (bytes)` });
    }
  };
  range('segmentBytesMax', SEGMENT_BYTES_MIN, SEGMENT_BYTES_LIMIT);
  range('recordBytesMax', RECORD_BYTES_MIN, RECORD_BYTES_LIMIT);
  range('manifestBytesMax', MANIFEST_BYTES_MIN, MANIFEST_BYTES_LIMIT);
  return problems;
}

/**
 * The most data one entry may carry under `config`: a record's limit minus the framing around
 * one entry. The Raft layer must bound proposals by it (a larger entry fails an assertion).
 * Unit: bytes.
 */
export function entryDataBytesMax(config: WalConfig): number {
  return config.recordBytesMax - RECORD_HEADER_BYTES - ENTRIES_HEADER_BYTES - ENTRY_HEADER_BYTES;
}
