/**
 * Snapshot byte format 2: the state in sections, so that a large store is encoded a bounded
 * piece at a time (the runtime spreads the pieces over event-loop turns) and decoded without
 * one giant string. Integers: `u32` little-endian; `varint` unsigned LEB128 up to 2^53 - 1.
 *
 * ```
 * format:u8 (2)
 * section*: bytes:u32 (of what follows)  kind:u8  body
 *   kind 0, first and once: UTF-8 JSON {"format":2,"appliedIndex":..,"revision":..,
 *     "compactRevision":..,"logTimeMs":..,"counts":{"kvs":N,"events":N,"clients":N,"leases":N}}
 *   kind 1, key-values in key order: count:varint, then count × (keyBytes:varint key(UTF-8)
 *     valueBytes:varint value(UTF-8) createRevision:varint modRevision:varint version:varint
 *     lease:varint (0: none; lease ids are log indexes, never 0))
 *   kind 2 events, 3 client records, 4 leases: a UTF-8 JSON array of objects as in format 1
 *   kind 5, last and at most once: UTF-8 JSON of the auth state (auth.ts: users with their
 *     password hashes, roles, the token key); absent while auth was never used, so a store
 *     without users encodes as before, and an older reader refuses a snapshot that has one
 *     (an unknown section) rather than dropping the cluster's users unseen
 * ```
 *
 * Key-values are binary and written straight into the output (UTF-8 by `encodeInto`): no
 * string or object per key is made, so a large snapshot leaves little garbage (garbage, and
 * every large allocation, bring on full collections, which would stall the event loop). The
 * other lists are short (their own bounds) and stay JSON. Sections come in kind order and hold
 * about `KV_SNAPSHOT_SECTION_BYTES` (one large value may make one longer). Decoding is total:
 * every length is checked against the bytes present before it is used, the sections must come
 * in order and match the header's counts, and each item's shape is checked.
 */
import { assert } from '../assert.js';
import { authSnapshotProblem, type KvAuthSnapshot } from './auth.js';
import type { KvClientRecord } from './client-table.js';
import type { KvDecodeError } from './codec.js';
import { eventSizeBytes } from './history.js';
import {
  isClientRecord, isCount, isEvent, isLease, isObject, SNAPSHOT_COUNT_FIELDS,
} from './snapshot-shape.js';
import { utf8ByteLength } from './text.js';
import type { KeyValue, KvEvent, KvLease } from './types.js';

/** The first byte of a sectioned snapshot. */
export const KV_SNAPSHOT_FORMAT_SECTIONS_V2 = 2;

/**
 * The size a section aims at, estimated before encoding (UTF-16 units plus a fixed overhead
 * per item). Unit: bytes. 64 KiB: JSON sections stay below V8's large-object size (they die
 * young), and a few sections make a step of about a millisecond.
 */
export const KV_SNAPSHOT_SECTION_BYTES = 64 * 1024;

/** Sections measured, or written, per step: about 256 KiB. */
const SECTIONS_PER_STEP = 4;
/** Items per section of the lists kept small by their own bounds (clients, leases). */
const SECTION_ITEMS_MAX = 4_096;
/** Estimated bytes of a key-value besides its key and value (six varints). */
const KV_OVERHEAD_BYTES = 16;
/** 2^53: varints stop below it. */
const SAFE_LIMIT = 2 ** 53;

const SECTION_KINDS = ['header', 'kvs', 'events', 'clients', 'leases', 'auth'] as const;
type SectionKind = (typeof SECTION_KINDS)[number];
type ListName = Exclude<SectionKind, 'header' | 'auth'>;
const LIST_ORDER: readonly ListName[] = ['kvs', 'events', 'clients', 'leases'];

/** The scalar part of a snapshot. */
export interface KvSnapshotHeader {
  /** The state's format (`KV_SNAPSHOT_FORMAT`), apart from this byte format. */
  readonly format: 1 | 2;
  readonly appliedIndex: number;
  readonly revision: number;
  readonly compactRevision: number;
  readonly logTimeMs: number;
}

/**
 * A snapshot's contents as the encoder reads them: the scalars, the live keys handed out in key
 * order a batch at a time, and the three lists that their own bounds keep short.
 */
export interface KvSnapshotSource {
  readonly header: KvSnapshotHeader;
  readonly keyCount: number;
  /**
   * The next live keys in key order: at least one while any remain, stopping once about
   * `bytesTarget` (see `kvSectionBytes`) were handed out; empty at the end.
   */
  nextKeys(bytesTarget: number): readonly KeyValue[];
  /** Starts the keys over from the first (the encoder reads them twice: measure, write). */
  rewindKeys(): void;
  readonly events: readonly KvEvent[];
  readonly clients: readonly KvClientRecord[];
  readonly leases: readonly KvLease[];
  /** Absent when auth was never used. */
  readonly auth?: KvAuthSnapshot;
}

/** Estimated bytes of a key-value in a section (for sources that batch keys). */
export function kvSectionBytes(kv: KeyValue): number {
  return kv.key.length + kv.value.length + KV_OVERHEAD_BYTES;
}

const encoder = new TextEncoder();

/** Bytes of `value` as a varint. */
function varintBytes(value: number): number {
  let bytes = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) bytes++;
  return bytes;
}

/** Encoded bytes of a key-value, and its key's and value's UTF-8 lengths. */
function kvBytes(kv: KeyValue): number {
  const keyBytes = utf8ByteLength(kv.key);
  const valueBytes = utf8ByteLength(kv.value);
  return varintBytes(keyBytes) + keyBytes + varintBytes(valueBytes) + valueBytes
    + varintBytes(kv.createRevision) + varintBytes(kv.modRevision) + varintBytes(kv.version)
    + varintBytes(kv.lease ?? 0);
}

/** Writes into one buffer of the exact size (the encoder measured everything first). */
class Out {
  at = 0;
  private readonly view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  byte(value: number): void {
    this.bytes[this.at++] = value;
  }

  u32(value: number): void {
    this.view.setUint32(this.at, value, true);
    this.at += 4;
  }

  varint(value: number): void {
    let rest = value;
    for (; rest >= 0x80; rest = Math.floor(rest / 0x80)) {
      this.bytes[this.at++] = (rest % 0x80) | 0x80;
    }
    this.bytes[this.at++] = rest;
  }

  /** `text` as UTF-8, exactly `bytes` long (measured before). */
  text(text: string, bytes: number): void {
    if (bytes === text.length) {
      // ASCII: byte by byte, so a key or value costs no view object (garbage is what brings
      // on collections; two views per key-value were most of a snapshot's garbage).
      for (let i = 0; i < bytes; i++) this.bytes[this.at + i] = text.charCodeAt(i);
      this.at += bytes;
      return;
    }
    const result = encoder.encodeInto(text, this.bytes.subarray(this.at, this.at + bytes));
    assert(result.read === text.length && result.written === bytes,
      () => `snapshot: a string of ${bytes} bytes wrote ${result.written}`);
    this.at += bytes;
  }
}

/** What the measuring pass found about one section, for the writing pass. */
type PlannedSection =
  | { readonly kind: 'kvs'; readonly count: number; readonly bytes: number }
  | { readonly kind: Exclude<SectionKind, 'kvs'>; readonly json: string; readonly bytes: number };

/**
 * Encodes a source in steps of bounded work: first it measures every section (key-values
 * counted, the short lists turned into JSON), then allocates the whole output once, at its
 * exact size, and writes the sections into it; the last step returns it. One allocation, no
 * copy: a large snapshot costs its own size in memory once, and the little garbage it leaves
 * brings on no extra full collection (each one would stall the event loop).
 */
export class KvSnapshotEncoder {
  private readonly plan: PlannedSection[] = [];
  private totalBytes = 1;
  private list = 0;
  /** Position in the current list (events, clients, leases) while measuring. */
  private at = 0;
  private out: Out | undefined;
  private written = 0;
  private result: Uint8Array | undefined;

  /** `sectionBytes`: tests make it tiny, to cross every boundary. */
  constructor(private readonly source: KvSnapshotSource,
    private readonly sectionBytes: number = KV_SNAPSHOT_SECTION_BYTES) {
    assert(Number.isSafeInteger(sectionBytes) && sectionBytes >= 1,
      () => `snapshot section bytes ${sectionBytes}`);
    const { header } = source;
    this.planJson('header', { ...header, counts: { kvs: source.keyCount,
      events: source.events.length, clients: source.clients.length,
      leases: source.leases.length } });
  }

  /** Does one step; returns the encoding once finished (and on every call after that). */
  step(): Uint8Array | undefined {
    if (this.result !== undefined) return this.result;
    for (let i = 0; i < SECTIONS_PER_STEP; i++) {
      if (this.list < LIST_ORDER.length) {
        this.measureNext();
      } else if (this.out === undefined) {
        this.out = new Out(new Uint8Array(this.totalBytes));
        this.out.byte(KV_SNAPSHOT_FORMAT_SECTIONS_V2);
        this.source.rewindKeys();
      } else if (this.written < this.plan.length) {
        this.write(this.out, this.plan[this.written++] as PlannedSection);
      } else {
        assert(this.out.at === this.totalBytes,
          () => `snapshot wrote ${this.out?.at} of ${this.totalBytes} bytes`);
        this.result = this.out.bytes;
        return this.result;
      }
    }
    return undefined;
  }

  /** Runs every step at once (small stores, tests). */
  finish(): Uint8Array {
    for (;;) {
      const bytes = this.step();
      if (bytes !== undefined) return bytes;
    }
  }

  /** Measures the next section, or moves on to the next list when this one is done. */
  private measureNext(): void {
    const name = LIST_ORDER[this.list] as ListName;
    if (name === 'kvs') {
      const kvs = this.source.nextKeys(this.sectionBytes);
      if (kvs.length === 0) {
        this.list++;
        return;
      }
      let bytes = 1 + varintBytes(kvs.length);
      for (const kv of kvs) bytes += kvBytes(kv);
      this.add({ kind: 'kvs', count: kvs.length, bytes });
      return;
    }
    const items: readonly unknown[] = this.source[name];
    if (this.at >= items.length) {
      this.list++;
      this.at = 0;
      const auth = this.source.auth;
      if (this.list === LIST_ORDER.length && auth !== undefined) this.planJson('auth', auth);
      return;
    }
    const end = this.sectionEnd(name, items);
    this.planJson(name, items.slice(this.at, end));
    this.at = end;
  }

  private sectionEnd(name: ListName, items: readonly unknown[]): number {
    let end = this.at;
    let estimate = 0;
    const itemsMax = this.at + SECTION_ITEMS_MAX;
    const more = (): boolean => end === this.at || estimate < this.sectionBytes;
    while (end < items.length && end < itemsMax && more()) {
      estimate += name === 'events' ? eventSizeBytes(items[end] as KvEvent) : 200;
      end++;
    }
    return end;
  }

  private planJson(kind: Exclude<SectionKind, 'kvs'>, value: unknown): void {
    const json = JSON.stringify(value);
    this.add({ kind, json, bytes: 1 + utf8ByteLength(json) });
  }

  private add(section: PlannedSection): void {
    assert(section.bytes <= 0xffff_ffff, () => `snapshot section of ${section.bytes} bytes`);
    this.plan.push(section);
    this.totalBytes += 4 + section.bytes;
  }

  private write(out: Out, section: PlannedSection): void {
    const start = out.at;
    out.u32(section.bytes);
    out.byte(SECTION_KINDS.indexOf(section.kind));
    if (section.kind !== 'kvs') {
      out.text(section.json, section.bytes - 1);
    } else {
      const kvs = this.source.nextKeys(this.sectionBytes);
      assert(kvs.length === section.count,
        () => `snapshot: ${kvs.length} keys where ${section.count} were measured`);
      out.varint(kvs.length);
      for (const kv of kvs) {
        const keyBytes = utf8ByteLength(kv.key);
        out.varint(keyBytes);
        out.text(kv.key, keyBytes);
        const valueBytes = utf8ByteLength(kv.value);
        out.varint(valueBytes);
        out.text(kv.value, valueBytes);
        out.varint(kv.createRevision);
        out.varint(kv.modRevision);
        out.varint(kv.version);
        out.varint(kv.lease ?? 0);
      }
    }
    assert(out.at - start === 4 + section.bytes,
      () => `snapshot section wrote ${out.at - start - 4} of ${section.bytes} bytes`);
  }
}

/** A source over plain lists (a `KvSnapshot` held in memory). */
export function listSource(header: KvSnapshotHeader, lists: {
  readonly kvs: readonly KeyValue[]; readonly events: readonly KvEvent[];
  readonly clients: readonly KvClientRecord[]; readonly leases: readonly KvLease[];
  readonly auth?: KvAuthSnapshot;
}): KvSnapshotSource {
  let next = 0;
  return {
    header, keyCount: lists.kvs.length, events: lists.events, clients: lists.clients,
    leases: lists.leases, ...(lists.auth === undefined ? {} : { auth: lists.auth }),
    rewindKeys: () => {
      next = 0;
    },
    nextKeys: (bytesTarget) => {
      const start = next;
      let estimate = 0;
      while (next < lists.kvs.length && (next === start || estimate < bytesTarget)) {
        estimate += kvSectionBytes(lists.kvs[next] as KeyValue);
        next++;
      }
      return lists.kvs.slice(start, next);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Decoding

export interface DecodedSections {
  readonly header: KvSnapshotHeader;
  readonly kvs: KeyValue[];
  readonly events: KvEvent[];
  readonly clients: KvClientRecord[];
  readonly leases: KvLease[];
  auth?: KvAuthSnapshot;
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

/** Reads within [at, end) of `bytes`; every read checks the bounds (throws on a short read). */
class Reader {
  constructor(private readonly bytes: Uint8Array, public at: number, readonly end: number) {}

  get done(): boolean {
    return this.at >= this.end;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.at >= this.end) throw new Error(`varint cut short at byte ${this.at}`);
      const byte = this.bytes[this.at++] as number;
      value += (byte & 0x7f) * scale;
      if (value >= SAFE_LIMIT) throw new Error(`varint at byte ${this.at} exceeds 2^53 - 1`);
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }

  text(): string {
    const length = this.varint();
    if (length > this.end - this.at) {
      throw new Error(`string at byte ${this.at} claims ${length} bytes, `
        + `${this.end - this.at} remain`);
    }
    const text = fatalDecoder.decode(this.bytes.subarray(this.at, this.at + length));
    this.at += length;
    return text;
  }
}

/** The lists and scalars in format-2 `bytes` (shapes checked, not relations), or why not. */
export function decodeSections(bytes: Uint8Array): DecodedSections | KvDecodeError {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 1;
  let counts: Record<ListName, number> | undefined;
  let lists: DecodedSections | undefined;
  let kindAt = 0;
  try {
    while (at < bytes.length) {
      if (at + 5 > bytes.length) return failure(`section header cut short at byte ${at}`);
      const length = view.getUint32(at, true);
      if (length < 1 || length > bytes.length - at - 4) {
        return failure(`section at byte ${at} claims ${length} bytes, `
          + `${bytes.length - at - 4} remain`);
      }
      const kind = SECTION_KINDS[bytes[at + 4] as number];
      const reader = new Reader(bytes, at + 5, at + 4 + length);
      at += 4 + length;
      if (kind === undefined) return failure(`unknown section kind ${bytes[reader.at - 1]}`);
      const index = SECTION_KINDS.indexOf(kind);
      if (index < kindAt || (kind === 'header') !== (lists === undefined)) {
        return failure(`section ${kind} out of order`);
      }
      kindAt = index;
      if (lists === undefined) {
        const header = parseJson(bytes, reader);
        const found = headerProblem(header);
        if (typeof found === 'string') return failure(found);
        counts = found;
        lists = { header: headerOf(header as Readonly<Record<string, number>>), kvs: [],
          events: [], clients: [], leases: [] };
        continue;
      }
      if (kind === 'auth') {
        const auth = parseJson(bytes, reader);
        const problem = authSnapshotProblem(auth);
        if (problem !== undefined) return failure(problem);
        lists.auth = auth as KvAuthSnapshot;
        kindAt = index + 1; // once
        continue;
      }
      const problem = kind === 'kvs' ? readKvs(reader, lists.kvs)
        : addItems(lists, kind as ListName, parseJson(bytes, reader));
      if (problem !== undefined) return failure(problem);
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return failure(`snapshot sections unreadable: ${why}`);
  }
  if (lists === undefined || counts === undefined) return failure('no header section');
  for (const name of LIST_ORDER) {
    if (lists[name].length !== counts[name]) {
      return failure(`${name}: ${lists[name].length} items, the header says ${counts[name]}`);
    }
  }
  return lists;
}

function failure(reason: string): KvDecodeError {
  return { kind: 'decode-error', reason };
}

/** The rest of the reader's section as UTF-8 JSON (throws on bad UTF-8 or JSON). */
function parseJson(bytes: Uint8Array, reader: Reader): unknown {
  return JSON.parse(fatalDecoder.decode(bytes.subarray(reader.at, reader.end)));
}

function readKvs(reader: Reader, kvs: KeyValue[]): string | undefined {
  const count = reader.varint();
  for (let i = 0; i < count; i++) {
    const key = reader.text();
    const value = reader.text();
    const createRevision = reader.varint();
    const modRevision = reader.varint();
    const version = reader.varint();
    const lease = reader.varint();
    kvs.push(lease === 0 ? { key, value, createRevision, modRevision, version }
      : { key, value, createRevision, modRevision, version, lease });
  }
  if (!reader.done) return `kvs section at item ${kvs.length}: bytes left after ${count} items`;
  return undefined;
}

function headerProblem(value: unknown): Record<ListName, number> | string {
  if (!isObject(value)) return 'snapshot header must be an object';
  for (const field of SNAPSHOT_COUNT_FIELDS) {
    if (!isCount(value[field])) return `snapshot.${field} must be an integer >= 0`;
  }
  const counts = value['counts'];
  if (!isObject(counts) || !LIST_ORDER.every((name) => isCount(counts[name]))) {
    return 'snapshot header counts must be integers >= 0';
  }
  return counts as Record<ListName, number>;
}

function headerOf(value: Readonly<Record<string, number>>): KvSnapshotHeader {
  return { format: value['format'] as 1 | 2, appliedIndex: value['appliedIndex'] as number,
    revision: value['revision'] as number, compactRevision: value['compactRevision'] as number,
    logTimeMs: value['logTimeMs'] as number };
}

function addItems(lists: DecodedSections, name: ListName, items: unknown): string | undefined {
  if (!Array.isArray(items)) return `a ${name} section must be a JSON array`;
  const target = lists[name] as unknown[];
  const check = name === 'events' ? isEvent : name === 'clients' ? isClientRecord : isLease;
  for (const item of items) {
    if (!check(item)) return `snapshot.${name}[${target.length}] is malformed`;
    target.push(item);
  }
  return undefined;
}
