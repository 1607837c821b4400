/**
 * Shape checks of parsed snapshot JSON: types only (`checkKvSnapshot` in snapshot.ts checks the
 * relations between the parts). Shared by both snapshot byte formats.
 */
import type { KvClientRecord } from './client-table.js';
import type { KeyValue, KvEvent, KvLease } from './types.js';

export type Fields = Readonly<Record<string, unknown>>;

export const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

export function isKeyValue(value: unknown): value is KeyValue {
  return isObject(value) && typeof value['key'] === 'string' && typeof value['value'] === 'string'
    && isCount(value['createRevision']) && isCount(value['modRevision'])
    && isCount(value['version']) && (value['lease'] === undefined || isCount(value['lease']));
}

export function isLease(value: unknown): value is KvLease {
  return isObject(value) && isCount(value['id']) && isCount(value['ttlMs'])
    && isCount(value['remainingMs']) && typeof value['renewing'] === 'boolean'
    && isCount(value['renewals'])
    && (value['owner'] === undefined || typeof value['owner'] === 'string');
}

export function isEvent(value: unknown): value is KvEvent {
  return isObject(value) && (value['type'] === 'put' || value['type'] === 'delete')
    && isKeyValue(value['kv']) && (value['prevKv'] === undefined || isKeyValue(value['prevKv']));
}

const RESULT_KINDS: readonly unknown[] = ['put', 'delete', 'txn', 'compact', 'lease-grant',
  'lease-revoke', 'auth', 'error'];

export function isClientRecord(value: unknown): value is KvClientRecord {
  // The saved result is only handed back to a retrying client, so its kind is checked, not
  // every field: a damaged one cannot hurt the replica.
  return isObject(value) && typeof value['clientId'] === 'string'
    && isCount(value['sequence']) && isCount(value['appliedAtMs'])
    && (value['digest'] === undefined || typeof value['digest'] === 'string')
    && isObject(value['result']) && RESULT_KINDS.includes(value['result']['kind']);
}

/** The snapshot's scalar fields, each an integer >= 0. */
export const SNAPSHOT_COUNT_FIELDS = ['format', 'appliedIndex', 'revision', 'compactRevision',
  'logTimeMs'] as const;

/** Why `value` is not a whole snapshot object (format 1's JSON), or undefined. */
export function snapshotShapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'snapshot must be an object';
  for (const field of SNAPSHOT_COUNT_FIELDS) {
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
