/**
 * The write-ahead log's on-disk record format, version 1. All integers are little-endian.
 *
 * ```
 * record   = length:u32  crc:u32  type:u8  payload        length = 1 + payload bytes
 *                        crc = CRC-32C of type and payload (src/core/checksum.ts)
 * type 1   segment header: magic:u32 ("CWAL")  version:u16  sequence:u32  firstIndex:u64
 * type 2   entries:        firstIndex:u64  count:u32  count × (term:u64  kind:u8  size:u32  data)
 * type 3   hard state:     term:u64  commitIndex:u64  hasVote:u8  voteBytes:u16  vote (UTF-8)
 * type 4   truncate:       lastKeptIndex:u64      (Raft §5.3: the log is cut back to this index)
 * type 5   snapshot:       index:u64  term:u64   (Raft §7 InstallSnapshot: the whole log is
 *                          replaced by the snapshot file of that index and term, synced before)
 * ```
 *
 * u64 fields hold integers up to 2^53 − 1 (JavaScript's safe range); larger values are refused
 * on write and reported as damage on read. Decoding is total: any bytes give a record or a
 * reason, and no length read from the bytes is trusted before it is checked against the
 * bytes actually present.
 */
import { assert, assertNever } from '../../core/assert.js';
import { crc32c } from '../../core/checksum.js';
import type { LogIndex, NodeId, Term } from '../../core/ids.js';
import type { Entry, EntryKind, HardState } from '../../core/raft/types.js';

/** Bytes before the type: length and checksum. The length counts what follows them. */
export const RECORD_FRAME_BYTES = 8;
/** Bytes before a record's payload: length, checksum and type. */
export const RECORD_HEADER_BYTES = RECORD_FRAME_BYTES + 1;
/** Bytes of an entries payload before its first entry: firstIndex and count. */
export const ENTRIES_HEADER_BYTES = 12;
/** Bytes of one entry before its data: term, kind, data size. */
export const ENTRY_HEADER_BYTES = 13;
/** "CWAL" as a little-endian u32: the first bytes of every segment's payload. */
export const SEGMENT_MAGIC = 0x4c415743;
/** The format version this code writes and reads. */
export const WAL_FORMAT_VERSION = 1;
/**
 * Longest vote (a NodeId) a hard state record holds, in UTF-8 bytes: small enough that the
 * largest hard state record (284 bytes) fits under the smallest allowed recordBytesMax.
 */
export const VOTE_BYTES_MAX = 256;

const TYPE_SEGMENT_HEADER = 1;
const TYPE_ENTRIES = 2;
const TYPE_HARD_STATE = 3;
const TYPE_TRUNCATE = 4;
const TYPE_SNAPSHOT = 5;

export type WalRecord =
  | {
      readonly type: 'segment-header';
      readonly magic: number;
      readonly version: number;
      readonly sequence: number;
      /** The index the segment's first entry gets: the log's last index when it opened, + 1. */
      readonly firstIndex: LogIndex;
    }
  | { readonly type: 'entries'; readonly entries: readonly Entry[] }
  | { readonly type: 'hard-state'; readonly hardState: HardState }
  | { readonly type: 'truncate'; readonly lastKeptIndex: LogIndex }
  | { readonly type: 'snapshot'; readonly index: LogIndex; readonly term: Term };

/** What reading one record at an offset found. */
export type RecordRead =
  | { readonly kind: 'ok'; readonly record: WalRecord; readonly endOffset: number }
  /** The frame is unusable: cut short, impossible length, or checksum mismatch. */
  | { readonly kind: 'bad'; readonly reason: string }
  /** The checksum holds but the payload makes no sense: written wrong, never torn. */
  | { readonly kind: 'malformed'; readonly reason: string };

const ENTRY_KIND_CODES: Readonly<Record<EntryKind, number>> = { normal: 0, noop: 1, config: 2 };
/** Stateless, so shared: one per hard state record was an allocation per batch. */
const UTF8 = new TextEncoder();
const ENTRY_KINDS: readonly EntryKind[] = ['normal', 'noop', 'config'];

// ---------------------------------------------------------------------------------- encoding

/** Builds one record: frames `type` and the payload written by `fill` into `payloadBytes`. */
function encodeRecord(type: number, payloadBytes: number, fill: (w: Writer) => void): Uint8Array {
  const bytes = new Uint8Array(RECORD_HEADER_BYTES + payloadBytes);
  const writer = new Writer(bytes, RECORD_HEADER_BYTES);
  fill(writer);
  assert(writer.offset === bytes.length,
    () => `record type ${type}: wrote ${writer.offset} of ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  bytes[RECORD_FRAME_BYTES] = type;
  view.setUint32(0, bytes.length - RECORD_FRAME_BYTES, true);
  view.setUint32(4, crc32c(bytes, RECORD_FRAME_BYTES), true);
  return bytes;
}

export function encodeSegmentHeader(sequence: number, firstIndex: LogIndex): Uint8Array {
  assert(Number.isInteger(sequence) && sequence >= 1 && sequence <= 0xffff_ffff,
    () => `segment sequence out of range: ${sequence}`);
  return encodeRecord(TYPE_SEGMENT_HEADER, 18, (w) => {
    w.u32(SEGMENT_MAGIC);
    w.u16(WAL_FORMAT_VERSION);
    w.u32(sequence);
    w.u64(firstIndex);
  });
}

/** Bytes one entry takes inside an entries record. */
export function entryEncodedBytes(entry: Entry): number {
  return ENTRY_HEADER_BYTES + entry.data.length;
}

/** One record holding `entries`, which must be consecutive (the caller checks the size). */
export function encodeEntries(entries: readonly Entry[]): Uint8Array {
  const first = entries[0];
  assert(first !== undefined, 'encodeEntries: no entries');
  let payloadBytes = ENTRIES_HEADER_BYTES;
  for (const entry of entries) payloadBytes += entryEncodedBytes(entry);
  return encodeRecord(TYPE_ENTRIES, payloadBytes, (w) => {
    w.u64(first.index);
    w.u32(entries.length);
    for (const entry of entries) {
      w.u64(entry.term);
      w.u8(ENTRY_KIND_CODES[entry.kind]);
      w.u32(entry.data.length);
      w.bytes(entry.data);
    }
  });
}

export function encodeHardState(hardState: HardState): Uint8Array {
  const vote = hardState.vote === undefined ? undefined : UTF8.encode(hardState.vote);
  assert(vote === undefined || vote.length <= VOTE_BYTES_MAX,
    () => `vote ${JSON.stringify(hardState.vote)} exceeds ${VOTE_BYTES_MAX} UTF-8 bytes`);
  return encodeRecord(TYPE_HARD_STATE, 19 + (vote?.length ?? 0), (w) => {
    w.u64(hardState.term);
    w.u64(hardState.commitIndex);
    w.u8(vote === undefined ? 0 : 1);
    w.u16(vote?.length ?? 0);
    if (vote !== undefined) w.bytes(vote);
  });
}

export function encodeTruncate(lastKeptIndex: LogIndex): Uint8Array {
  return encodeRecord(TYPE_TRUNCATE, 8, (w) => w.u64(lastKeptIndex));
}

/** The log is now the snapshot (index, term) and nothing after it (an installed snapshot). */
export function encodeSnapshotRecord(index: LogIndex, term: Term): Uint8Array {
  return encodeRecord(TYPE_SNAPSHOT, 16, (w) => {
    w.u64(index);
    w.u64(term);
  });
}

// ---------------------------------------------------------------------------------- decoding

/**
 * Reads the record at `offset` of `bytes`, checking its length against `recordBytesMax` and
 * the bytes present before looking further, then its checksum, then its payload.
 */
export function readRecord(bytes: Uint8Array, offset: number, recordBytesMax: number): RecordRead {
  const left = bytes.length - offset;
  if (left < RECORD_HEADER_BYTES) {
    const reason = `record header cut short (${left} of ${RECORD_HEADER_BYTES} bytes)`;
    return { kind: 'bad', reason };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(offset, true);
  const recordBytes = RECORD_FRAME_BYTES + length;
  if (length < 1 || recordBytes > recordBytesMax) {
    const reason = `impossible record length ${length} (recordBytesMax ${recordBytesMax})`;
    return { kind: 'bad', reason };
  }
  if (recordBytes > left) {
    return { kind: 'bad', reason: `record of ${recordBytes} bytes cut short (${left} bytes left)` };
  }
  const bodyStart = offset + RECORD_FRAME_BYTES;
  const stored = view.getUint32(offset + 4, true);
  const computed = crc32c(bytes, bodyStart, bodyStart + length);
  if (stored !== computed) {
    const reason = `checksum mismatch (stored ${hex(stored)}, computed ${hex(computed)})`;
    return { kind: 'bad', reason };
  }
  const payload = bytes.subarray(bodyStart + 1, bodyStart + length);
  const decoded = decodePayload(bytes[bodyStart]!, payload);
  if (typeof decoded === 'string') return { kind: 'malformed', reason: decoded };
  return { kind: 'ok', record: decoded, endOffset: offset + recordBytes };
}

/** The record, or why its payload is not one. */
function decodePayload(type: number, payload: Uint8Array): WalRecord | string {
  const r = new Reader(payload);
  let record: WalRecord | undefined;
  switch (type) {
    case TYPE_SEGMENT_HEADER: record = decodeSegmentHeader(r); break;
    case TYPE_ENTRIES: record = decodeEntries(r); break;
    case TYPE_HARD_STATE: record = decodeHardState(r); break;
    case TYPE_TRUNCATE: {
      const lastKeptIndex = r.u64();
      record = lastKeptIndex === undefined
        ? undefined
        : { type: 'truncate', lastKeptIndex: lastKeptIndex as LogIndex };
      break;
    }
    case TYPE_SNAPSHOT: {
      const index = r.u64();
      const term = r.u64();
      record = index === undefined || term === undefined
        ? undefined
        : { type: 'snapshot', index: index as LogIndex, term: term as Term };
      break;
    }
    default: return `unknown record type ${type} (written by a newer version?)`;
  }
  if (record === undefined || r.failed) {
    return `${typeName(type)} record: ${r.problem ?? 'bad value'}`;
  }
  if (r.offset !== payload.length) {
    return `${typeName(type)} record: ${payload.length - r.offset} unexpected trailing bytes`;
  }
  return record;
}

function decodeSegmentHeader(r: Reader): WalRecord | undefined {
  const magic = r.u32();
  const version = r.u16();
  const sequence = r.u32();
  const firstIndex = r.u64();
  if (magic === undefined || version === undefined || sequence === undefined) return undefined;
  if (firstIndex === undefined) return undefined;
  return { type: 'segment-header', magic, version, sequence, firstIndex: firstIndex as LogIndex };
}

function decodeEntries(r: Reader): WalRecord | undefined {
  const firstIndex = r.u64();
  const count = r.u32();
  if (firstIndex === undefined || count === undefined) return undefined;
  // Bound the count by the bytes present before allocating for it.
  if (count > r.left / ENTRY_HEADER_BYTES) return r.fail(`count ${count} exceeds the payload`);
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const term = r.u64();
    const kindCode = r.u8();
    const size = r.u32();
    if (term === undefined || kindCode === undefined || size === undefined) return undefined;
    const kind = ENTRY_KINDS[kindCode];
    if (kind === undefined) return r.fail(`unknown entry kind ${kindCode}`);
    const data = r.bytes(size);
    if (data === undefined) return undefined;
    const index = firstIndex + i;
    if (!Number.isSafeInteger(index)) return r.fail(`index ${index} out of range`);
    entries.push({ index: index as LogIndex, term: term as Term, kind, data });
  }
  return { type: 'entries', entries };
}

function decodeHardState(r: Reader): WalRecord | undefined {
  const term = r.u64();
  const commitIndex = r.u64();
  const hasVote = r.u8();
  const voteBytes = r.u16();
  if (term === undefined || commitIndex === undefined || voteBytes === undefined) return undefined;
  if (hasVote !== 0 && hasVote !== 1) return r.fail(`hasVote is ${hasVote}`);
  const raw = r.bytes(voteBytes);
  if (raw === undefined) return undefined;
  let vote: NodeId | undefined;
  if (hasVote === 1) {
    try {
      vote = new TextDecoder('utf-8', { fatal: true }).decode(raw) as NodeId;
    } catch {
      return r.fail('vote is not UTF-8');
    }
  }
  const hardState: HardState = { term: term as Term, vote, commitIndex: commitIndex as LogIndex };
  return { type: 'hard-state', hardState };
}

function typeName(type: number): string {
  switch (type) {
    case TYPE_SEGMENT_HEADER: return 'segment header';
    case TYPE_ENTRIES: return 'entries';
    case TYPE_HARD_STATE: return 'hard state';
    case TYPE_TRUNCATE: return 'truncate';
    case TYPE_SNAPSHOT: return 'snapshot';
    default: return `type ${type}`;
  }
}

/** The record's type as a word, for messages. */
export function recordTypeName(record: WalRecord): string {
  switch (record.type) {
    case 'segment-header': return 'segment header';
    case 'entries': return 'entries';
    case 'hard-state': return 'hard state';
    case 'truncate': return 'truncate';
    case 'snapshot': return 'snapshot';
    default: return assertNever(record, 'WAL record');
  }
}

export function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}

// ---------------------------------------------------------------------------------- cursors

class Writer {
  private readonly view: DataView;
  constructor(private readonly target: Uint8Array, public offset: number) {
    this.view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  }
  u8(value: number): void {
    this.view.setUint8(this.offset, value);
    this.offset += 1;
  }
  u16(value: number): void {
    this.view.setUint16(this.offset, value, true);
    this.offset += 2;
  }
  u32(value: number): void {
    this.view.setUint32(this.offset, value, true);
    this.offset += 4;
  }
  u64(value: number): void {
    assert(Number.isSafeInteger(value) && value >= 0, () => `u64 field out of range: ${value}`);
    this.u32(value % 0x1_0000_0000);
    this.u32(Math.floor(value / 0x1_0000_0000));
  }
  bytes(value: Uint8Array): void {
    this.target.set(value, this.offset);
    this.offset += value.length;
  }
}

/** Reads fields until one does not fit; then every read returns undefined and `failed` holds. */
class Reader {
  offset = 0;
  failed = false;
  problem: string | undefined;
  private readonly view: DataView;
  constructor(private readonly source: Uint8Array) {
    this.view = new DataView(source.buffer, source.byteOffset, source.byteLength);
  }
  get left(): number {
    return this.source.length - this.offset;
  }
  fail(problem: string): undefined {
    this.failed = true;
    this.problem ??= problem;
    return undefined;
  }
  private take(size: number): number | undefined {
    if (this.failed || size > this.left) {
      return this.fail(`payload cut short at byte ${this.offset}`);
    }
    const at = this.offset;
    this.offset += size;
    return at;
  }
  u8(): number | undefined {
    const at = this.take(1);
    return at === undefined ? undefined : this.view.getUint8(at);
  }
  u16(): number | undefined {
    const at = this.take(2);
    return at === undefined ? undefined : this.view.getUint16(at, true);
  }
  u32(): number | undefined {
    const at = this.take(4);
    return at === undefined ? undefined : this.view.getUint32(at, true);
  }
  u64(): number | undefined {
    const at = this.take(8);
    if (at === undefined) return undefined;
    const high = this.view.getUint32(at + 4, true);
    if (high > 0x1f_ffff) return this.fail(`u64 at byte ${at} exceeds 2^53 - 1`);
    return high * 0x1_0000_0000 + this.view.getUint32(at, true);
  }
  bytes(size: number): Uint8Array | undefined {
    const at = this.take(size);
    return at === undefined ? undefined : this.source.subarray(at, at + size);
  }
}
