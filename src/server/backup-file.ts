/**
 * The backup file of `conclave snapshot save` (format 1): a member's key-value snapshot at one
 * log index, in frames, so a member can stream it and the CLI can check it as it arrives.
 * All integers little-endian.
 *
 * ```
 * magic:u32 ("CBAK")  version:u16  clusterId:16 ASCII hex  index:u64  term:u64
 * revision:u64  keys:u64
 * frames: length:u32 (1 .. BACKUP_FRAME_BYTES_MAX) data        -- the KV snapshot's bytes
 * end:    0:u32  dataBytes:u64  crc:u32 (CRC-32C of every byte before it)
 * ```
 *
 * A file cut short has no end (truncated); any flipped bit fails the CRC. `BackupReader` is
 * fed bytes in any pieces and never trusts a length before checking it against its bound.
 */
import { crc32c } from '../core/checksum.js';

/** "CBAK" as a little-endian u32. */
export const BACKUP_MAGIC = 0x4b414243;
export const BACKUP_FORMAT_VERSION = 1;
export const BACKUP_HEADER_BYTES = 4 + 2 + 16 + 8 * 4;
const END_BYTES = 4 + 8 + 4;

/**
 * Largest frame of snapshot data. Unit: bytes. Default: 1 MiB. Why: one frame is written per
 * event-loop turn by the member, a few ms of socket work; a reader buffers at most one.
 */
export const BACKUP_FRAME_BYTES_MAX = 1024 * 1024;

export interface BackupHeader {
  /** The cluster the backup was taken from (a restore must make another one). */
  readonly clusterId: string;
  /** The log index and term the state includes. */
  readonly index: number;
  readonly term: number;
  readonly revision: number;
  readonly keys: number;
}

export interface BackupSummary extends BackupHeader {
  readonly dataBytes: number;
  readonly fileBytes: number;
  /** The CRC-32C of the file, 8 hex digits. */
  readonly checksum: string;
}

export function encodeBackupHeader(header: BackupHeader): Uint8Array {
  const bytes = new Uint8Array(BACKUP_HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, BACKUP_MAGIC, true);
  view.setUint16(4, BACKUP_FORMAT_VERSION, true);
  bytes.set(new TextEncoder().encode(header.clusterId.padEnd(16, '0').slice(0, 16)), 6);
  [header.index, header.term, header.revision, header.keys]
    .forEach((x, i) => setU64(view, 22 + 8 * i, x));
  return bytes;
}

export function encodeFrameLength(length: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, length, true);
  return bytes;
}

/** The end marker and the trailer, given the data's length and the CRC of all bytes so far. */
export function encodeBackupEnd(dataBytes: number, crcSoFar: number): Uint8Array {
  const bytes = new Uint8Array(END_BYTES);
  const view = new DataView(bytes.buffer);
  setU64(view, 4, dataBytes);
  view.setUint32(12, crc32c(bytes, 0, 12, crcSoFar), true);
  return bytes;
}

/** Checks a backup fed in pieces; keeps the data when asked (status and restore need it). */
export class BackupReader {
  private pending: Uint8Array = new Uint8Array(0);
  private crc = 0;
  private header: BackupHeader | undefined;
  private frameLeft = 0;
  private dataBytes = 0;
  private fileBytes = 0;
  private ended: BackupSummary | undefined;
  private readonly data: Uint8Array[] = [];

  constructor(private readonly keepData: boolean) {}

  /** Undefined, or why these bytes cannot continue a backup (then stop feeding). */
  feed(chunk: Uint8Array): string | undefined {
    if (this.ended !== undefined) return 'bytes after the end of the backup';
    this.fileBytes += chunk.length;
    this.pending = this.pending.length === 0 ? chunk : concat(this.pending, chunk);
    for (;;) {
      const step = this.step();
      if (step !== 'more') return step === 'ok' ? undefined : step;
    }
  }

  /** The summary once the whole backup was fed, else why it is not a whole backup. */
  finish(): BackupSummary | string {
    if (this.ended !== undefined) return this.ended;
    if (this.header === undefined) {
      return `truncated: ${this.fileBytes} bytes, shorter than a backup's header`;
    }
    return `truncated after ${this.fileBytes} bytes (${this.dataBytes} bytes of data): no end `
      + 'marker (the save was interrupted, or the file was cut)';
  }

  /** The snapshot data (when kept), once finished. */
  snapshotData(): Uint8Array {
    return concat(...this.data);
  }

  /** 'ok': needs more bytes; 'more': made progress; a string: what is wrong. */
  private step(): 'ok' | 'more' | string {
    if (this.header === undefined) return this.readHeader();
    if (this.frameLeft > 0) return this.readFrameData();
    if (this.pending.length < 4) return 'ok';
    const length = this.view().getUint32(0, true);
    if (length === 0) return this.readEnd();
    if (length > BACKUP_FRAME_BYTES_MAX) {
      return `damaged: a frame of ${length} bytes at data byte ${this.dataBytes} (at most `
        + `${BACKUP_FRAME_BYTES_MAX})`;
    }
    this.consume(4);
    this.frameLeft = length;
    return 'more';
  }

  private readHeader(): 'ok' | 'more' | string {
    if (this.pending.length < BACKUP_HEADER_BYTES) return 'ok';
    const view = this.view();
    if (view.getUint32(0, true) !== BACKUP_MAGIC) return 'not a conclave backup (magic)';
    const version = view.getUint16(4, true);
    if (version !== BACKUP_FORMAT_VERSION) {
      return `backup format ${version}; this build reads format ${BACKUP_FORMAT_VERSION}`;
    }
    const clusterId = new TextDecoder().decode(this.pending.subarray(6, 22));
    const [index, term, revision, keys] = [0, 1, 2, 3].map((i) => getU64(view, 22 + 8 * i));
    if ([index, term, revision, keys].some((x) => x === undefined) || !/^[0-9a-f]{16}$/
      .test(clusterId)) return 'damaged header';
    this.header = { clusterId, index: index!, term: term!, revision: revision!, keys: keys! };
    this.consume(BACKUP_HEADER_BYTES);
    return 'more';
  }

  private readFrameData(): 'ok' | 'more' {
    if (this.pending.length === 0) return 'ok';
    const n = Math.min(this.frameLeft, this.pending.length);
    if (this.keepData) this.data.push(this.pending.slice(0, n));
    this.dataBytes += n;
    this.frameLeft -= n;
    this.consume(n);
    return 'more';
  }

  private readEnd(): 'ok' | string {
    if (this.pending.length < END_BYTES) return 'ok';
    const view = this.view();
    const crc = crc32c(this.pending, 0, 12, this.crc);
    if (view.getUint32(12, true) !== crc) return 'damaged: checksum mismatch';
    if (getU64(view, 4) !== this.dataBytes) return 'damaged: data length mismatch';
    if (this.pending.length > END_BYTES) return 'bytes after the end of the backup';
    this.ended = { ...this.header!, dataBytes: this.dataBytes, fileBytes: this.fileBytes,
      checksum: crc.toString(16).padStart(8, '0') };
    this.pending = new Uint8Array(0);
    return 'ok';
  }

  private consume(n: number): void {
    this.crc = crc32c(this.pending, 0, n, this.crc);
    this.pending = this.pending.subarray(n);
  }

  private view(): DataView {
    return new DataView(this.pending.buffer, this.pending.byteOffset, this.pending.byteLength);
  }
}

function setU64(view: DataView, at: number, x: number): void {
  view.setUint32(at, x % 0x1_0000_0000, true);
  view.setUint32(at + 4, Math.floor(x / 0x1_0000_0000), true);
}

function getU64(view: DataView, at: number): number | undefined {
  const high = view.getUint32(at + 4, true);
  if (high >= 2 ** 21) return undefined;
  return high * 0x1_0000_0000 + view.getUint32(at, true);
}

function concat(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
