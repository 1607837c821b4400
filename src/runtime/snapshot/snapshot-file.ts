/**
 * The snapshot file format, versions 1 to 3, and file names. All integers little-endian.
 *
 * ```
 * magic:u32 ("CSNP")  version:u16  index:u64  term:u64
 * voterCount:u16  voterCount × (bytes:u16 UTF-8)   learnerCount:u16  learnerCount × (same)
 * version 2, 3: addrCount:u16  addrCount × (id bytes:u16 UTF-8, addr bytes:u16 UTF-8)
 * version 3:    urlCount:u16   urlCount × (id bytes:u16 UTF-8, url bytes:u16 UTF-8)
 * dataBytes:u64  data   crc:u32 (CRC-32C of every byte before it)
 * ```
 *
 * Version 2 adds the membership's recorded peer addresses, version 3 its published client
 * URLs. Each file is written in the oldest version that holds its membership (version 1
 * without either, what members before version 2 wrote and read), and all three are read.
 *
 * A file is named `snap-<index>-<term>.snap` (both zero-padded to 16 digits, so name order is
 * index order); it is written as `<name>.tmp` and renamed once synced, so a file with the final
 * name is complete unless the disk damaged it later, which the checksum catches. Decoding is
 * total: any bytes give a snapshot or a reason, and no length is trusted before it is checked
 * against the bytes present.
 */
import { assert } from '../../core/assert.js';
import { crc32c } from '../../core/checksum.js';
import type { LogIndex, NodeId, Term } from '../../core/ids.js';
import { validateClientUrls, validatePeerAddrs } from '../../core/raft/membership.js';
import type {
  ClientUrlRecord, PeerAddrRecord, Snapshot, SnapshotMeta,
} from '../../core/raft/types.js';

/** "CSNP" as a little-endian u32. */
export const SNAPSHOT_MAGIC = 0x504e5343;
/** The newest format written (an older one when the membership records less). */
export const SNAPSHOT_FORMAT_VERSION = 3;
const NAME = /^snap-(\d{16})-(\d{16})\.snap$/;
const TEMP_SUFFIX = '.tmp';
const U64_LIMIT = 2 ** 53;

export function snapshotFileName(index: LogIndex, term: Term): string {
  return `snap-${String(index).padStart(16, '0')}-${String(term).padStart(16, '0')}.snap`;
}

/** The temporary name a snapshot is written under before its rename. */
export function snapshotTempName(index: LogIndex, term: Term): string {
  return snapshotFileName(index, term) + TEMP_SUFFIX;
}

/** (index, term) from a snapshot file name; undefined for any other name. */
export function parseSnapshotFileName(name: string): { index: LogIndex; term: Term } | undefined {
  const match = NAME.exec(name);
  if (match === null) return undefined;
  return { index: Number(match[1]) as LogIndex, term: Number(match[2]) as Term };
}

export function isSnapshotTempName(name: string): boolean {
  return name.endsWith(TEMP_SUFFIX) && NAME.test(name.slice(0, -TEMP_SUFFIX.length));
}

export function encodeSnapshot(snapshot: Snapshot): Uint8Array {
  const header = encodeSnapshotHeader(snapshot.meta, snapshot.data.length);
  const size = header.length + snapshot.data.length + 4;
  const bytes = new Uint8Array(size);
  bytes.set(header, 0);
  bytes.set(snapshot.data, header.length);
  new DataView(bytes.buffer).setUint32(size - 4, crc32c(bytes, 0, size - 4), true);
  return bytes;
}

/**
 * Everything before the data: magic, version, index, term, membership, data length. A file is
 * this, then the data, then `encodeSnapshotTrailer` of the CRC-32C of both (written in pieces
 * by `writeSnapshotFile`, so a large snapshot never sits twice in memory).
 */
export function encodeSnapshotHeader(meta: SnapshotMeta, dataBytes: number): Uint8Array {
  const encoder = new TextEncoder();
  const voters = meta.membership.voters.map((v) => encoder.encode(v));
  const learners = meta.membership.learners.map((v) => encoder.encode(v));
  const records = meta.membership.peerAddrs ?? [];
  const addrs = records.flatMap((r) => [encoder.encode(r.id), encoder.encode(r.addr)]);
  const urlRecords = meta.membership.clientUrls ?? [];
  const urls = urlRecords.flatMap((r) => [encoder.encode(r.id), encoder.encode(r.url)]);
  const version = urlRecords.length > 0 ? 3 : records.length > 0 ? 2 : 1;
  const idBytes = [...voters, ...learners, ...addrs, ...urls]
    .reduce((sum, id) => sum + 2 + id.length, 0);
  const size = 4 + 2 + 8 + 8 + 2 + 2 + (version >= 2 ? 2 : 0) + (version === 3 ? 2 : 0)
    + idBytes + 8;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let at = 0;
  const u16 = (x: number): void => {
    assert(x <= 0xffff, () => `snapshot field ${x} exceeds 16 bits`);
    view.setUint16(at, x, true);
    at += 2;
  };
  const u64 = (x: number): void => {
    assert(Number.isSafeInteger(x) && x >= 0, () => `snapshot u64 field out of range: ${x}`);
    view.setUint32(at, x % 0x1_0000_0000, true);
    view.setUint32(at + 4, Math.floor(x / 0x1_0000_0000), true);
    at += 8;
  };
  const ids = (list: readonly Uint8Array[]): void => {
    u16(list.length);
    for (const id of list) {
      u16(id.length);
      bytes.set(id, at);
      at += id.length;
    }
  };
  view.setUint32(at, SNAPSHOT_MAGIC, true);
  at += 4;
  u16(version);
  u64(meta.index);
  u64(meta.term);
  ids(voters);
  ids(learners);
  const pairs = (count: number, texts: readonly Uint8Array[]): void => {
    u16(count);
    for (const text of texts) {
      u16(text.length);
      bytes.set(text, at);
      at += text.length;
    }
  };
  if (version >= 2) pairs(records.length, addrs);
  if (version === 3) pairs(urlRecords.length, urls);
  u64(dataBytes);
  assert(at === size, () => `snapshot header wrote ${at} of ${size} bytes`);
  return bytes;
}

/** The file's last 4 bytes: the CRC-32C of every byte before them. */
export function encodeSnapshotTrailer(crc: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, crc, true);
  return bytes;
}

/** The snapshot in `bytes`, or the reason they are not one. */
export function decodeSnapshot(bytes: Uint8Array): Snapshot | string {
  if (bytes.length < 4 + 2 + 8 + 8 + 2 + 2 + 8 + 4) return `only ${bytes.length} bytes`;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const body = bytes.length - 4;
  const stored = view.getUint32(body, true);
  if (crc32c(bytes, 0, body) !== stored) return 'checksum mismatch';
  if (view.getUint32(0, true) !== SNAPSHOT_MAGIC) return 'not a snapshot file (magic)';
  const version = view.getUint16(4, true);
  if (version < 1 || version > 3) return `format version ${version} is not supported`;
  let at = 6;
  const fail = (why: string): never => {
    throw new Error(why);
  };
  const need = (n: number): number => {
    if (at + n > body) fail(`cut short at byte ${at}`);
    const here = at;
    at += n;
    return here;
  };
  const u16 = (): number => view.getUint16(need(2), true);
  const u64 = (): number => {
    const here = need(8);
    const high = view.getUint32(here + 4, true);
    if (high >= U64_LIMIT / 0x1_0000_0000) fail(`u64 at byte ${here} exceeds 2^53 - 1`);
    return high * 0x1_0000_0000 + view.getUint32(here, true);
  };
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = (): string => {
    const length = u16();
    return decoder.decode(bytes.subarray(need(length), at));
  };
  const ids = (): NodeId[] => {
    const count = u16();
    const out: NodeId[] = [];
    for (let i = 0; i < count; i++) {
      const id = text();
      if (id.length === 0) fail('empty node id');
      out.push(id as NodeId);
    }
    return out;
  };
  // Read as untrusted: a damaged or forged file must not hand the transport a bad address.
  const records = <T>(since: number, members: readonly NodeId[], field: 'addr' | 'url',
    validate: (raw: unknown, members: ReadonlySet<string>) => T[] | string): T[] => {
    if (version < since) return [];
    const count = u16();
    const raw: Record<string, string>[] = [];
    for (let i = 0; i < count; i++) raw.push({ id: text(), [field]: text() });
    const valid = validate(raw, new Set<string>(members));
    return typeof valid === 'string' ? fail(valid) : valid;
  };
  try {
    const index = u64() as LogIndex;
    const term = u64() as Term;
    const voters = ids();
    const learners = ids();
    const addrs = records<PeerAddrRecord>(2, [...voters, ...learners], 'addr', validatePeerAddrs);
    const urls = records<ClientUrlRecord>(3, [...voters, ...learners], 'url', validateClientUrls);
    const dataBytes = u64();
    if (at + dataBytes !== body) fail(`data of ${dataBytes} bytes does not end at the checksum`);
    const data = bytes.slice(need(dataBytes), at);
    if (index < 1 || term < 1) fail(`index ${index} / term ${term} must be above 0`);
    if (voters.length === 0) fail('no voters');
    const membership = { voters, learners, ...(addrs.length === 0 ? {} : { peerAddrs: addrs }),
      ...(urls.length === 0 ? {} : { clientUrls: urls }) };
    return { meta: { index, term, membership }, data };
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
