/**
 * Snapshot byte format 2: the state in sections, so that a large store is encoded a bounded
 * piece at a time (the runtime spreads the pieces over event-loop turns) and decoded without
 * one giant string. All integers little-endian.
 *
 * ```
 * format:u8 (2)
 * section*: bytes:u32  UTF-8 JSON
 *   first:  {"format":1,"appliedIndex":..,"revision":..,"compactRevision":..,"logTimeMs":..,
 *            "counts":{"kvs":N,"events":N,"clients":N,"leases":N}}
 *   then:   ["kvs",[[key,value,createRevision,modRevision,version(,lease)],...]]  in key order,
 *           then ["events",[...]], ["clients",[...]], ["leases",[...]]  (objects as in format 1)
 * ```
 *
 * Key-values are tuples (a quarter of a small key-value's JSON is field names otherwise). A
 * section holds about `KV_SNAPSHOT_SECTION_BYTES` (one large value may make it longer). Decoding
 * is total: every length is checked against the bytes present before it is used, the lists
 * must come in order and match the header's counts, and each item's shape is checked.
 */
import { assert } from '../assert.js';
import type { KvClientRecord } from './client-table.js';
import type { KvDecodeError } from './codec.js';
import { eventSizeBytes } from './history.js';
import {
  isClientRecord, isCount, isEvent, isLease, isObject, SNAPSHOT_COUNT_FIELDS,
} from './snapshot-shape.js';
import type { KeyValue, KvEvent, KvLease } from './types.js';

/** The first byte of a sectioned snapshot. */
export const KV_SNAPSHOT_FORMAT_SECTIONS_V2 = 2;

/**
 * The encoded size a section aims at, estimated before encoding (UTF-16 units plus a fixed
 * overhead per item). Unit: bytes. 256 KiB: about a millisecond of JSON encoding per section
 * on a laptop-class core, so one section per event-loop turn never stalls the loop for long.
 */
export const KV_SNAPSHOT_SECTION_BYTES = 256 * 1024;

/** Items per section of the lists kept small by their own bounds (clients, leases). */
const SECTION_ITEMS_MAX = 4_096;
/** Estimated JSON bytes of a key-value tuple besides its key and value. */
const KV_TUPLE_OVERHEAD_BYTES = 40;
/** How many bytes one join step copies into the final buffer. Unit: bytes. */
const JOIN_BYTES_PER_STEP = 8 * 1024 * 1024;

/** The scalar part of a snapshot. */
export interface KvSnapshotHeader {
  readonly format: 1;
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
   * `bytesTarget` (keys plus values, in UTF-16 units) were handed out; empty at the end.
   */
  nextKeys(bytesTarget: number): readonly KeyValue[];
  readonly events: readonly KvEvent[];
  readonly clients: readonly KvClientRecord[];
  readonly leases: readonly KvLease[];
}

type ListName = 'kvs' | 'events' | 'clients' | 'leases';
const LIST_ORDER: readonly ListName[] = ['kvs', 'events', 'clients', 'leases'];

const encoder = new TextEncoder();

/**
 * Encodes a source in steps of bounded work: each `step()` encodes one section, or copies a
 * slice of the sections into the result, and returns the whole encoding at the last step.
 */
export class KvSnapshotEncoder {
  private pieces: Uint8Array[] = [new Uint8Array([KV_SNAPSHOT_FORMAT_SECTIONS_V2])];
  private bytes = 1;
  private list = 0;
  /** Position in the current list (events, clients, leases). */
  private at = 0;
  private output: Uint8Array | undefined;
  private joined = 0;
  private joinedBytes = 0;
  private done = false;

  constructor(private readonly source: KvSnapshotSource,
    private readonly sectionBytes: number = KV_SNAPSHOT_SECTION_BYTES) {
    assert(Number.isSafeInteger(sectionBytes) && sectionBytes >= 1,
      () => `snapshot section bytes ${sectionBytes}`);
    const { header } = source;
    this.section({ ...header, counts: { kvs: source.keyCount, events: source.events.length,
      clients: source.clients.length, leases: source.leases.length } });
  }

  /** Does one step; returns the encoding once finished (and on every call after that). */
  step(): Uint8Array | undefined {
    if (this.output !== undefined) return this.joinStep();
    const name = LIST_ORDER[this.list];
    if (name === undefined) {
      this.output = new Uint8Array(this.bytes);
      return this.joinStep();
    }
    if (name === 'kvs') {
      const kvs = this.source.nextKeys(this.sectionBytes);
      if (kvs.length === 0) this.list++;
      else this.section(['kvs', kvs.map(kvTuple)]);
      return undefined;
    }
    const items: readonly unknown[] = this.source[name];
    if (this.at >= items.length) {
      this.list++;
      this.at = 0;
      return undefined;
    }
    const end = this.sectionEnd(name, items);
    this.section([name, items.slice(this.at, end)]);
    this.at = end;
    return undefined;
  }

  /** Runs every step at once (small stores, tests). */
  finish(): Uint8Array {
    for (;;) {
      const bytes = this.step();
      if (bytes !== undefined) return bytes;
    }
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

  private section(value: unknown): void {
    const json = encoder.encode(JSON.stringify(value));
    const length = new Uint8Array(4);
    new DataView(length.buffer).setUint32(0, json.length, true);
    this.pieces.push(length, json);
    this.bytes += 4 + json.length;
  }

  /** Copies the next pieces into the output, dropping each once copied. */
  private joinStep(): Uint8Array | undefined {
    const output = this.output as Uint8Array;
    if (this.done) return output;
    let copied = 0;
    while (this.joined < this.pieces.length && copied < JOIN_BYTES_PER_STEP) {
      const piece = this.pieces[this.joined] as Uint8Array;
      output.set(piece, this.joinedBytes);
      this.joinedBytes += piece.length;
      copied += piece.length;
      this.joined++;
    }
    if (this.joined < this.pieces.length) return undefined;
    assert(this.joinedBytes === output.length,
      () => `snapshot join wrote ${this.joinedBytes} of ${output.length} bytes`);
    this.pieces = [];
    this.done = true;
    return output;
  }
}

function kvTuple(kv: KeyValue): unknown[] {
  const tuple: unknown[] = [kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version];
  if (kv.lease !== undefined) tuple.push(kv.lease);
  return tuple;
}

/** A source over plain lists (a `KvSnapshot` held in memory). */
export function listSource(header: KvSnapshotHeader, lists: {
  readonly kvs: readonly KeyValue[]; readonly events: readonly KvEvent[];
  readonly clients: readonly KvClientRecord[]; readonly leases: readonly KvLease[];
}): KvSnapshotSource {
  let next = 0;
  return {
    header, keyCount: lists.kvs.length, events: lists.events, clients: lists.clients,
    leases: lists.leases,
    nextKeys: (bytesTarget) => {
      const start = next;
      let estimate = 0;
      while (next < lists.kvs.length && (next === start || estimate < bytesTarget)) {
        const kv = lists.kvs[next] as KeyValue;
        estimate += kv.key.length + kv.value.length + KV_TUPLE_OVERHEAD_BYTES;
        next++;
      }
      return lists.kvs.slice(start, next);
    },
  };
}

/** Estimated bytes of a key-value in a section (for sources that batch keys). */
export function kvSectionBytes(kv: KeyValue): number {
  return kv.key.length + kv.value.length + KV_TUPLE_OVERHEAD_BYTES;
}

// ---------------------------------------------------------------------------------------------
// Decoding

export interface DecodedSections {
  readonly header: KvSnapshotHeader;
  readonly kvs: KeyValue[];
  readonly events: KvEvent[];
  readonly clients: KvClientRecord[];
  readonly leases: KvLease[];
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

/** The lists and scalars in format-2 `bytes` (shapes checked, not relations), or why not. */
export function decodeSections(bytes: Uint8Array): DecodedSections | KvDecodeError {
  const fail = (reason: string): KvDecodeError => ({ kind: 'decode-error', reason });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 1;
  const next = (): unknown => {
    if (at + 4 > bytes.length) throw new Error(`section length cut short at byte ${at}`);
    const length = view.getUint32(at, true);
    if (at + 4 + length > bytes.length) {
      throw new Error(`section at byte ${at} claims ${length} bytes, `
        + `${bytes.length - at - 4} remain`);
    }
    const text = fatalDecoder.decode(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
    return JSON.parse(text);
  };
  try {
    const first = next();
    const counts = headerProblem(first);
    if (typeof counts === 'string') return fail(counts);
    const lists: DecodedSections = { header: headerOf(first as Readonly<Record<string, number>>),
      kvs: [], events: [], clients: [], leases: [] };
    let listAt = 0;
    while (at < bytes.length) {
      const section = next();
      if (!Array.isArray(section) || section.length !== 2 || !Array.isArray(section[1])) {
        return fail(`section at byte ${at} is not [name, items]`);
      }
      const index = LIST_ORDER.indexOf(section[0] as ListName);
      if (index < listAt) return fail(`section ${String(section[0])} out of order`);
      listAt = index;
      const problem = addItems(lists, LIST_ORDER[index] as ListName, section[1] as unknown[]);
      if (problem !== undefined) return fail(problem);
    }
    for (const name of LIST_ORDER) {
      if (lists[name].length !== counts[name]) {
        return fail(`${name}: ${lists[name].length} items, the header says ${counts[name]}`);
      }
    }
    return lists;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return fail(`snapshot sections unreadable: ${why}`);
  }
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
  return { format: value['format'] as 1, appliedIndex: value['appliedIndex'] as number,
    revision: value['revision'] as number, compactRevision: value['compactRevision'] as number,
    logTimeMs: value['logTimeMs'] as number };
}

function addItems(lists: DecodedSections, name: ListName, items: unknown[]): string | undefined {
  const target = lists[name] as unknown[];
  const check = name === 'events' ? isEvent : name === 'clients' ? isClientRecord : isLease;
  for (const item of items) {
    const value = name === 'kvs' ? kvFromTuple(item) : check(item) ? item : undefined;
    if (value === undefined) return `snapshot.${name}[${target.length}] is malformed`;
    target.push(value);
  }
  return undefined;
}

function kvFromTuple(value: unknown): KeyValue | undefined {
  if (!Array.isArray(value) || (value.length !== 5 && value.length !== 6)) return undefined;
  const [key, text, createRevision, modRevision, version, lease] = value as unknown[];
  if (typeof key !== 'string' || typeof text !== 'string' || !isCount(createRevision)
    || !isCount(modRevision) || !isCount(version)) return undefined;
  if (value.length === 5) return { key, value: text, createRevision, modRevision, version };
  return isCount(lease) ? { key, value: text, createRevision, modRevision, version, lease }
    : undefined;
}
