/**
 * The store's whole state as plain data, and its bytes. Two byte formats, told apart by the
 * first byte: `KV_SNAPSHOT_FORMAT_JSON_V1` (1: UTF-8 JSON of the whole object, as for commands,
 * see codec.ts), which this version still reads, and `KV_SNAPSHOT_FORMAT_SECTIONS_V2` (2: the
 * state in bounded sections, snapshot-sections.ts), which it writes, so that a large store is
 * encoded a piece at a time (`KvSnapshotEncoder`) without stalling the event loop. A snapshot
 * holds the live keys, the retained history (so watchers keep resuming across a restore), the
 * idempotent receiver's records (so retries stay at-most-once across a restore) and the leases
 * (which keys belong to which lease is on each key-value). A snapshot without `leases` (written
 * before leases existed) decodes with none.
 *
 * Decoding is total and checks both the shape and the invariants a store relies on (keys
 * sorted and unique, revisions consistent, history ordered above the compact revision), so a
 * damaged snapshot is refused with a reason instead of breaking a replica later.
 */
import type { KvAuthSnapshot } from './auth.js';
import type { KvClientRecord } from './client-table.js';
import type { KvDecodeError } from './codec.js';
import {
  decodeSections, KV_SNAPSHOT_FORMAT_SECTIONS_V2, KvSnapshotEncoder, listSource,
} from './snapshot-sections.js';
import { snapshotShapeProblem } from './snapshot-shape.js';
import type { KeyValue, KvEvent, KvLease } from './types.js';

/**
 * The `format` field of snapshots built by this version (of the state, whatever the byte
 * format). 2: client records carry the digest of their command and keep trimmed answers (no
 * whole previous values). A format-1 snapshot still decodes (its records have no digest; the
 * store trims their answers as it loads them).
 */
export const KV_SNAPSHOT_FORMAT = 2;
/** Formats this version decodes. */
const KV_SNAPSHOT_FORMATS_READABLE: readonly number[] = [1, 2];
/** The first byte of a snapshot in byte format 1 (read, no longer written). */
export const KV_SNAPSHOT_FORMAT_JSON_V1 = 1;

export interface KvSnapshot {
  readonly format: 1 | typeof KV_SNAPSHOT_FORMAT;
  /** Index of the last log entry the state includes. */
  readonly appliedIndex: number;
  readonly revision: number;
  readonly compactRevision: number;
  /** Unit: ms (leader-stamped log time). */
  readonly logTimeMs: number;
  /** Live keys in key order. */
  readonly kvs: readonly KeyValue[];
  /** Retained history, oldest first. */
  readonly events: readonly KvEvent[];
  /** Idempotent receiver records, least recently applied first. */
  readonly clients: readonly KvClientRecord[];
  /** Leases in id order. */
  readonly leases: readonly KvLease[];
  /** Users, roles, the auth switch (auth.ts); absent while auth was never used. */
  readonly auth?: KvAuthSnapshot;
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

/** The snapshot's bytes (format 2) at once. Large stores: `KvSnapshotEncoder`, in steps. */
export function encodeKvSnapshot(snapshot: KvSnapshot): Uint8Array {
  const { format, appliedIndex, revision, compactRevision, logTimeMs } = snapshot;
  // listSource takes the lists (and the auth state, when present) from the snapshot itself.
  return new KvSnapshotEncoder(listSource({ format, appliedIndex, revision, compactRevision,
    logTimeMs }, snapshot)).finish();
}

/** The snapshot in `bytes` (either format), or why it is unusable. Never throws. */
export function decodeKvSnapshot(bytes: Uint8Array): KvSnapshot | KvDecodeError {
  const parsed = bytes[0] === KV_SNAPSHOT_FORMAT_SECTIONS_V2 ? decodeSectioned(bytes)
    : decodeJson(bytes);
  if ('kind' in parsed) return parsed;
  const problems = checkKvSnapshot(parsed);
  if (problems.length > 0) return { kind: 'decode-error', reason: problems.join('; ') };
  return parsed;
}

function decodeSectioned(bytes: Uint8Array): KvSnapshot | KvDecodeError {
  const sections = decodeSections(bytes);
  if ('kind' in sections) return sections;
  const { header, kvs, events, clients, leases, auth } = sections;
  return { ...header, kvs, events, clients, leases, ...(auth === undefined ? {} : { auth }) };
}

function decodeJson(bytes: Uint8Array): KvSnapshot | KvDecodeError {
  if (bytes.length === 0 || bytes[0] !== KV_SNAPSHOT_FORMAT_JSON_V1) {
    return { kind: 'decode-error', reason: `unknown snapshot format ${bytes[0]}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fatalDecoder.decode(bytes.subarray(1)));
  } catch (error) {
    return { kind: 'decode-error', reason: `snapshot is not UTF-8 JSON: ${String(error)}` };
  }
  const shape = snapshotShapeProblem(parsed);
  if (shape !== undefined) return { kind: 'decode-error', reason: shape };
  return { leases: [], ...(parsed as object) } as unknown as KvSnapshot;
}

/** The invariants a store relies on that `snapshot` breaks; empty when usable. */
export function checkKvSnapshot(snapshot: KvSnapshot): string[] {
  const problems: string[] = [];
  const { revision, compactRevision, logTimeMs, kvs, events, clients, leases } = snapshot;
  if (!KV_SNAPSHOT_FORMATS_READABLE.includes(snapshot.format)) {
    problems.push(`unknown format ${snapshot.format}`);
  }
  if (!(revision >= 1 && compactRevision <= revision)) {
    problems.push(`revision ${revision} must be >= 1 and >= compactRevision ${compactRevision}`);
  }
  kvs.forEach((kv, i) => {
    const before = kvs[i - 1];
    if (before !== undefined && !(before.key < kv.key)) problems.push(`kvs[${i}]: keys unsorted`);
    if (!(kv.version >= 1 && kv.createRevision >= 2 && kv.createRevision <= kv.modRevision
      && kv.modRevision <= revision)) problems.push(`kvs[${i}]: inconsistent revisions`);
  });
  events.forEach((event, i) => {
    const at = event.kv.modRevision;
    const before = events[i - 1];
    if (!(at > compactRevision && at <= revision)) {
      problems.push(`events[${i}]: revision ${at} outside (${compactRevision}, ${revision}]`);
    }
    if (before !== undefined && before.kv.modRevision > at) {
      problems.push(`events[${i}]: unordered`);
    }
    if (event.type === 'delete' && event.prevKv === undefined) {
      problems.push(`events[${i}]: a delete needs prevKv`);
    }
  });
  leases.forEach((lease, i) => {
    const before = leases[i - 1];
    if (before !== undefined && !(before.id < lease.id)) problems.push(`leases[${i}]: unsorted`);
    if (!(lease.ttlMs >= 1 && lease.remainingMs <= lease.ttlMs)) {
      problems.push(`leases[${i}]: remainingMs above ttlMs`);
    }
  });
  const leaseIds = new Set(leases.map((lease) => lease.id));
  kvs.forEach((kv, i) => {
    if (kv.lease !== undefined && !leaseIds.has(kv.lease)) {
      problems.push(`kvs[${i}]: attached to unknown lease ${kv.lease}`);
    }
  });
  const seen = new Set<string>();
  clients.forEach((client, i) => {
    const before = clients[i - 1];
    if (seen.has(client.clientId)) problems.push(`clients[${i}]: duplicate client id`);
    seen.add(client.clientId);
    if (client.appliedAtMs > logTimeMs
      || (before !== undefined && before.appliedAtMs > client.appliedAtMs)) {
      problems.push(`clients[${i}]: apply times out of order`);
    }
  });
  return problems;
}
