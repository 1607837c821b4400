/**
 * The idempotent receiver's memory (Raft thesis §6.3): per client, the highest sequence
 * applied, the digest of that command and what a retry needs of its answer, so that a retried
 * command returns the saved answer instead of applying twice, and a key reused for another
 * command is refused.
 *
 * What is kept of an answer: all of it while it is small (`clientResultBytesMax`); a larger one
 * is trimmed (`trimResult`): outcome, revision and counts stay, the key-values go. Whole
 * previous values are never kept for retries (issue #14: 600 puts of 1000 KiB with prevKv from
 * fresh client ids held 1.3 GB on every replica).
 *
 * Bounded three ways, all deterministic (every replica forgets the same clients at the same
 * entry): at most `clientsMax` records and `clientsBytesMax` estimated bytes, evicting the
 * client applied least recently (records are kept in a Map in order of their latest apply,
 * i.e. by log index); and a record whose latest apply is more than `clientIdleMsMax` of log
 * time old is dropped. A forgotten client is new again: its next command is applied whatever
 * its sequence, so at-most-once holds while the client's record is kept.
 */
import { KV_EVENT_OVERHEAD_BYTES } from './config.js';
import type {
  KeyValue, KvApplyResult, KvTxnOpResponse,
} from './types.js';

export interface KvClientRecord {
  readonly clientId: string;
  /** Highest sequence applied for the client. */
  readonly sequence: number;
  /** Log time of its apply. Unit: ms (leader-stamped). */
  readonly appliedAtMs: number;
  /** `kvCommandDigest` of the command applied; absent in records of older versions. */
  readonly digest?: string;
  /** What the apply returned (trimmed when large), returned again to a retry. */
  readonly result: KvApplyResult;
}

/** How a command's client stamp compares with the saved record. */
export type ClientCheck =
  | { readonly kind: 'new' }
  | { readonly kind: 'retry'; readonly result: KvApplyResult }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'stale'; readonly sequenceApplied: number };

/** A record's fixed part: the Map entry, the numbers and the 16-digit digest. Unit: bytes. */
const CLIENT_RECORD_OVERHEAD_BYTES = 150;

/** Estimated memory of a saved record. Independent of the digest, which old records lack. */
export function clientRecordSizeBytes(record: KvClientRecord): number {
  return CLIENT_RECORD_OVERHEAD_BYTES + 2 * record.clientId.length
    + resultSizeBytes(record.result);
}

/** Estimated memory of an answer: its key-values as in the history's estimate, plus a base. */
export function resultSizeBytes(result: KvApplyResult): number {
  switch (result.kind) {
    case 'put':
      return 64 + (result.prevKv === undefined ? 0 : keyValueBytes(result.prevKv));
    case 'delete':
      return 64 + sumKeyValueBytes(result.prevKvs);
    case 'txn':
      return 64 + result.responses.reduce((sum, r) => sum + opResponseBytes(r), 0);
    case 'error':
      return 64 + (result.error.code === 'invalid'
        ? result.error.problems.reduce((sum, p) => sum + 32 + 2 * (p.field.length
          + p.rule.length), 0) : 0);
    default:
      // compact, lease grant and revoke, the leader's lease bookkeeping: a few numbers.
      return 64;
  }
}

function opResponseBytes(response: KvTxnOpResponse): number {
  switch (response.kind) {
    case 'put':
      return 32 + (response.prevKv === undefined ? 0 : keyValueBytes(response.prevKv));
    case 'delete':
      return 32 + sumKeyValueBytes(response.prevKvs);
    case 'range':
      return 32 + sumKeyValueBytes(response.kvs);
  }
}

function keyValueBytes(kv: KeyValue): number {
  return KV_EVENT_OVERHEAD_BYTES + 2 * (kv.key.length + kv.value.length);
}

function sumKeyValueBytes(kvs: readonly KeyValue[] | undefined): number {
  let sum = 0;
  for (const kv of kvs ?? []) sum += keyValueBytes(kv);
  return sum;
}

/**
 * What is kept for a retry: `result` itself when its estimate is at most `bytesMax`, else the
 * same answer without key-values, marked `trimmed: true` (a transaction's range keeps `count`
 * and says `more` when it had matches).
 */
export function trimResult(result: KvApplyResult, bytesMax: number): KvApplyResult {
  if (resultSizeBytes(result) <= bytesMax) return result;
  switch (result.kind) {
    case 'put':
      return { kind: 'put', revision: result.revision, trimmed: true };
    case 'delete':
      return { kind: 'delete', revision: result.revision, deleted: result.deleted,
        trimmed: true };
    case 'txn':
      return { kind: 'txn', revision: result.revision, succeeded: result.succeeded,
        responses: result.responses.map(trimOpResponse), trimmed: true };
    case 'error':
      return result.error.code === 'invalid' ? { kind: 'error', error: { code: 'invalid',
        problems: result.error.problems.slice(0, 8) } } : result;
    default:
      return result;
  }
}

function trimOpResponse(response: KvTxnOpResponse): KvTxnOpResponse {
  switch (response.kind) {
    case 'put':
      return { kind: 'put' };
    case 'delete':
      return { kind: 'delete', deleted: response.deleted };
    case 'range':
      return { kind: 'range', kvs: [], more: response.count > 0, count: response.count };
  }
}

export class ClientTable {
  /** Least recently applied first (Map iteration is insertion order; updates re-insert). */
  private readonly records = new Map<string, KvClientRecord>();
  private bytes = 0;

  constructor(records: readonly KvClientRecord[] = []) {
    for (const record of records) {
      this.records.set(record.clientId, record);
      this.bytes += clientRecordSizeBytes(record);
    }
  }

  get size(): number {
    return this.records.size;
  }

  /** Estimated memory of every record (see `clientRecordSizeBytes`). Unit: bytes. */
  get sizeBytes(): number {
    return this.bytes;
  }

  /**
   * `digest` against the record's: a retry must carry the same command. A record without a
   * digest (written by an older version) accepts any retry, as before.
   */
  check(clientId: string, sequence: number, digest: string): ClientCheck {
    const record = this.records.get(clientId);
    if (record === undefined || sequence > record.sequence) return { kind: 'new' };
    if (sequence < record.sequence) return { kind: 'stale', sequenceApplied: record.sequence };
    if (record.digest !== undefined && record.digest !== digest) return { kind: 'mismatch' };
    return { kind: 'retry', result: record.result };
  }

  /** Saves the client's latest record and evicts the least recent beyond either bound. */
  save(record: KvClientRecord, clientsMax: number, bytesMax: number): void {
    this.remove(record.clientId);
    this.records.set(record.clientId, record);
    this.bytes += clientRecordSizeBytes(record);
    for (const [clientId] of this.records) {
      if (this.records.size <= clientsMax && this.bytes <= bytesMax) break;
      // The newest record stays even alone over the bound: its retry is the likeliest.
      if (clientId === record.clientId) break;
      this.remove(clientId);
    }
  }

  /** Forgets clients idle for more than `idleMsMax` at log time `nowMs`. */
  expire(nowMs: number, idleMsMax: number): void {
    // Records are in apply order and log time never decreases, so the oldest come first.
    for (const [clientId, record] of this.records) {
      if (nowMs - record.appliedAtMs <= idleMsMax) break;
      this.remove(clientId);
    }
  }

  get(clientId: string): KvClientRecord | undefined {
    return this.records.get(clientId);
  }

  /** The records, least recently applied first (for snapshots). */
  toArray(): KvClientRecord[] {
    return [...this.records.values()];
  }

  private remove(clientId: string): void {
    const record = this.records.get(clientId);
    if (record === undefined) return;
    this.records.delete(clientId);
    this.bytes -= clientRecordSizeBytes(record);
  }
}
