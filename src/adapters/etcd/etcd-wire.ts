/**
 * The client protocol's requests (src/ports/client-transport.ts) in etcd's v3 terms, both ways,
 * as pure functions: keys and values as UTF-8 bytes, a prefix as etcd's [key, rangeEnd), our
 * compares and transaction ops as etcd's, etcd's 64-bit decimal strings as numbers (checked),
 * and etcd's answers as the bodies the Conclave server returns (docs/api.md), so the client
 * reads both backends with the same code. Everything read from etcd is checked here; what
 * cannot be read becomes a CONCLAVE_PROTOCOL error.
 */
import { createHash, randomBytes } from 'node:crypto';
import type {
  KeyValue, KvCompare, KvEvent, KvTxnOp, KvTxnOpResponse,
} from '../../core/kv/types.js';
import { CoordError } from '../../errors.js';
import type { EtcdMessage } from './etcd-connection.js';

/** etcd's TTLs are whole seconds. Unit: ms per second. */
const MS_PER_S = 1000;

export const bytesOf = (text: string): Buffer => Buffer.from(text, 'utf8');

/**
 * etcd's range end for every key starting with `prefix`: the prefix with its last byte below
 * 0xff incremented (trailing 0xff bytes dropped); the empty prefix, and a prefix of only 0xff
 * bytes, is `\0`: every key from `key` on.
 */
export function prefixEnd(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i]! < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i] = prefix[i]! + 1;
      return end;
    }
  }
  return Buffer.from([0]);
}

/** `key` alone, or every key under it: etcd's key and range_end. */
export function keyRange(key: string, prefix: boolean | undefined): EtcdMessage {
  if (prefix !== true) return { key: bytesOf(key) };
  // The empty prefix covers every key: etcd spells that key = range_end = "\0".
  const start = key === '' ? Buffer.from([0]) : bytesOf(key);
  return { key: start, range_end: prefixEnd(bytesOf(key)) };
}

/** An etcd int64/uint64 (a decimal string with `longs: String`) as a safe integer. */
export function int(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw new CoordError('CONCLAVE_PROTOCOL', `etcd sent ${what} = ${String(value).slice(0, 40)}, `
      + 'not an integer this client can represent', { outcome: 'unknown' });
  }
  return n;
}

/** The header revision of an answer. */
export function revisionOf(answer: EtcdMessage): number {
  return int((answer['header'] as EtcdMessage | null | undefined)?.['revision'], 'revision');
}

function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : '';
}

/**
 * An etcd KeyValue as ours. A lease id beyond 2^53 (etcd's own ids, from a lease this client
 * did not grant) cannot be a JS number: it is left out rather than rounded to another lease.
 */
export function keyValueOf(kv: EtcdMessage): KeyValue {
  const lease = Number(kv['lease'] ?? 0);
  return {
    key: text(kv['key']), value: text(kv['value']),
    createRevision: int(kv['create_revision'], 'create_revision'),
    modRevision: int(kv['mod_revision'], 'mod_revision'),
    version: int(kv['version'], 'version'),
    ...(lease !== 0 && Number.isSafeInteger(lease) ? { lease } : {}),
  };
}

function present(value: unknown): value is EtcdMessage {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value);
}

/** An etcd watch Event as ours (a delete carries etcd's tombstone shape, as ours does). */
export function eventOf(event: EtcdMessage): KvEvent {
  const type = event['type'] === 'DELETE' ? 'delete' : 'put';
  if (!present(event['kv'])) {
    throw new CoordError('CONCLAVE_PROTOCOL', 'etcd sent a watch event without a key-value');
  }
  const kv = keyValueOf(event['kv']);
  const prev = event['prev_kv'];
  const prevKv = present(prev) && Buffer.isBuffer(prev['key']) && prev['key'].length > 0
    ? keyValueOf(prev) : undefined;
  return { type, kv, ...(prevKv === undefined ? {} : { prevKv }) };
}

const COMPARE_RESULTS = { 'equal': 'EQUAL', 'not-equal': 'NOT_EQUAL', 'greater': 'GREATER',
  'less': 'LESS' } as const;

/** Our compare as etcd's (the operand field named after the target, as in etcd). */
export function compareOf(compare: KvCompare): EtcdMessage {
  const base = { key: bytesOf(compare.key), result: COMPARE_RESULTS[compare.result] };
  switch (compare.target) {
    case 'value':
      return { ...base, target: 'VALUE', value: bytesOf(compare.value) };
    case 'version':
      return { ...base, target: 'VERSION', version: compare.version };
    case 'createRevision':
      return { ...base, target: 'CREATE', create_revision: compare.createRevision };
    case 'modRevision':
      return { ...base, target: 'MOD', mod_revision: compare.modRevision };
  }
}

export function putOf(op: { key: string; value: string; lease?: number; prevKv?: boolean }):
  EtcdMessage {
  return { key: bytesOf(op.key), value: bytesOf(op.value),
    ...(op.lease === undefined ? {} : { lease: op.lease }),
    ...(op.prevKv === true ? { prev_kv: true } : {}) };
}

export function deleteOf(op: { key: string; prefix?: boolean; prevKv?: boolean }): EtcdMessage {
  return { ...keyRange(op.key, op.prefix), ...(op.prevKv === true ? { prev_kv: true } : {}) };
}

export function rangeOf(op: { key: string; prefix?: boolean; limit?: number; revision?: number;
  serializable?: boolean }): EtcdMessage {
  return { ...keyRange(op.key, op.prefix),
    ...(op.limit === undefined || op.limit === 0 ? {} : { limit: op.limit }),
    ...(op.revision === undefined || op.revision === 0 ? {} : { revision: op.revision }),
    ...(op.serializable === true ? { serializable: true } : {}) };
}

export function txnOpOf(op: KvTxnOp): EtcdMessage {
  switch (op.kind) {
    case 'put':
      return { request_put: putOf(op) };
    case 'delete':
      return { request_delete_range: deleteOf(op) };
    case 'range':
      return { request_range: rangeOf(op) };
  }
}

function kvsOf(value: unknown): KeyValue[] {
  return Array.isArray(value) ? (value as EtcdMessage[]).map(keyValueOf) : [];
}

/** A Range answer's body (without kind and revision). */
export function rangeBody(answer: EtcdMessage): { kvs: KeyValue[]; more: boolean;
  count: number } {
  return { kvs: kvsOf(answer['kvs']), more: answer['more'] === true,
    count: int(answer['count'], 'count') };
}

export function putBody(answer: EtcdMessage): { prevKv?: KeyValue } {
  const prev = answer['prev_kv'];
  return present(prev) && Buffer.isBuffer(prev['key']) && prev['key'].length > 0
    ? { prevKv: keyValueOf(prev) } : {};
}

export function deleteBody(answer: EtcdMessage, prevKv: boolean | undefined):
  { deleted: number; prevKvs?: KeyValue[] } {
  return { deleted: int(answer['deleted'], 'deleted'),
    ...(prevKv === true ? { prevKvs: kvsOf(answer['prev_kvs']) } : {}) };
}

/** One response of a transaction's branch, read by the op that asked for it. */
export function txnResponseOf(response: EtcdMessage, op: KvTxnOp): KvTxnOpResponse {
  const bad = (): CoordError => new CoordError('CONCLAVE_PROTOCOL',
    `etcd answered a transaction's ${op.kind} with ${String(response['response'])}`,
    { outcome: 'unknown' });
  switch (op.kind) {
    case 'put': {
      const put = response['response_put'];
      if (!present(put)) throw bad();
      return { kind: 'put', ...putBody(put) };
    }
    case 'delete': {
      const del = response['response_delete_range'];
      if (!present(del)) throw bad();
      return { kind: 'delete', ...deleteBody(del, op.prevKv) };
    }
    case 'range': {
      const range = response['response_range'];
      if (!present(range)) throw bad();
      return { kind: 'range', ...rangeBody(range) };
    }
  }
}

/** A TTL in ms as etcd's whole seconds, rounded up (etcd may raise it to its minimum). */
export function ttlSecondsOf(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs / MS_PER_S));
}

export function msOfSeconds(seconds: unknown, what: string): number {
  return int(seconds, what) * MS_PER_S;
}

/**
 * The lease id this client asks etcd for (etcd lets the client choose one): 53 bits of
 * SHA-256 over the request's idempotency key, so a retried grant asks for the same id and
 * finds its first attempt's lease ("lease already exists") instead of granting a second one;
 * and an id every JS number represents exactly (etcd's own ids use all 63 bits). Without a
 * stamp, 53 random bits. Ids of live leases collide with probability about n²/2⁵⁴ for n live
 * leases (5 × 10⁻⁵ at a million): negligible, and documented in docs/backends.md.
 */
export function leaseIdFor(stamp: { clientId?: string; sequence?: number }): number {
  const seed = stamp.clientId === undefined || stamp.sequence === undefined
    ? randomBytes(8) : createHash('sha256').update(`${stamp.clientId}\n${stamp.sequence}`)
      .digest();
  const id = seed.readBigUInt64BE(0) & ((1n << 53n) - 1n);
  return id === 0n ? 1 : Number(id);
}

/** etcd's member ids as the hex strings etcdctl prints. */
export function memberIdOf(value: unknown): string {
  try {
    return BigInt(String(value)).toString(16);
  } catch {
    return String(value);
  }
}
