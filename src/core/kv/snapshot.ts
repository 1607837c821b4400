/**
 * The store's whole state as plain data, and its bytes: a version byte
 * (`KV_SNAPSHOT_FORMAT_JSON_V1` = 1) then UTF-8 JSON, as for commands (see codec.ts). A snapshot
 * holds the live keys, the retained history (so watchers keep resuming across a restore), the
 * idempotent receiver's records (so retries stay at-most-once across a restore) and the leases
 * (which keys belong to which lease is on each key-value). A snapshot without `leases` (written
 * before leases existed) decodes with none.
 *
 * Decoding is total and checks both the shape and the invariants a store relies on (keys
 * sorted and unique, revisions consistent, history ordered above the compact revision), so a
 * damaged snapshot is refused with a reason instead of breaking a replica later.
 */
import type { KvClientRecord } from './client-table.js';
import type { KvDecodeError } from './codec.js';
import type { KeyValue, KvEvent, KvLease } from './types.js';

/** The `format` field of snapshots built by this version. */
export const KV_SNAPSHOT_FORMAT = 1;
/** The first byte of an encoded snapshot. */
export const KV_SNAPSHOT_FORMAT_JSON_V1 = 1;

export interface KvSnapshot {
  readonly format: typeof KV_SNAPSHOT_FORMAT;
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
}

const encoder = new TextEncoder();
const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

export function encodeKvSnapshot(snapshot: KvSnapshot): Uint8Array {
  const json = encoder.encode(JSON.stringify(snapshot));
  const bytes = new Uint8Array(json.length + 1);
  bytes[0] = KV_SNAPSHOT_FORMAT_JSON_V1;
  bytes.set(json, 1);
  return bytes;
}

/** The snapshot in `bytes`, or why it is unusable. Never throws. */
export function decodeKvSnapshot(bytes: Uint8Array): KvSnapshot | KvDecodeError {
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
  const snapshot = { leases: [], ...(parsed as object) } as unknown as KvSnapshot;
  const problems = checkKvSnapshot(snapshot);
  if (problems.length > 0) return { kind: 'decode-error', reason: problems.join('; ') };
  return snapshot;
}

/** The invariants a store relies on that `snapshot` breaks; empty when usable. */
export function checkKvSnapshot(snapshot: KvSnapshot): string[] {
  const problems: string[] = [];
  const { revision, compactRevision, logTimeMs, kvs, events, clients, leases } = snapshot;
  if (snapshot.format !== KV_SNAPSHOT_FORMAT) problems.push(`unknown format ${snapshot.format}`);
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

// ---------------------------------------------------------------------------------------------
// Shape checks of parsed JSON (types only; `checkKvSnapshot` checks the relations).

type Fields = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function isKeyValue(value: unknown): value is KeyValue {
  return isObject(value) && typeof value['key'] === 'string' && typeof value['value'] === 'string'
    && isCount(value['createRevision']) && isCount(value['modRevision'])
    && isCount(value['version']) && (value['lease'] === undefined || isCount(value['lease']));
}

function isLease(value: unknown): value is KvLease {
  return isObject(value) && isCount(value['id']) && isCount(value['ttlMs'])
    && isCount(value['remainingMs']) && typeof value['renewing'] === 'boolean'
    && isCount(value['renewals']);
}

function isEvent(value: unknown): value is KvEvent {
  return isObject(value) && (value['type'] === 'put' || value['type'] === 'delete')
    && isKeyValue(value['kv']) && (value['prevKv'] === undefined || isKeyValue(value['prevKv']));
}

const RESULT_KINDS: readonly unknown[] = ['put', 'delete', 'txn', 'compact', 'lease-grant',
  'lease-revoke', 'error'];

function isClientRecord(value: unknown): value is KvClientRecord {
  // The saved result is only handed back to a retrying client, so its kind is checked, not
  // every field: a damaged one cannot hurt the replica.
  return isObject(value) && typeof value['clientId'] === 'string'
    && isCount(value['sequence']) && isCount(value['appliedAtMs'])
    && isObject(value['result']) && RESULT_KINDS.includes(value['result']['kind']);
}

function snapshotShapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'snapshot must be an object';
  for (const field of ['format', 'appliedIndex', 'revision', 'compactRevision', 'logTimeMs']) {
    if (!isCount(value[field])) return `snapshot.${field} must be an integer >= 0`;
  }
  const lists = [['kvs', isKeyValue], ['events', isEvent], ['clients', isClientRecord],
    ['leases', isLease]] as const;
  for (const [field, check] of lists) {
    // Older snapshots have no leases: none.
    if (field === 'leases' && value[field] === undefined) continue;
    const list = value[field];
    if (!Array.isArray(list)) return `snapshot.${field} must be an array`;
    const bad = list.findIndex((item) => !check(item));
    if (bad >= 0) return `snapshot.${field}[${bad}] is malformed`;
  }
  return undefined;
}
