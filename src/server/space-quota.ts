/**
 * The space quota (`--quota-backend-bytes`) and its NOSPACE alarm, modelled on etcd's: writes
 * that add data are refused with CONCLAVE_QUOTA_EXCEEDED (outcome failed) while the store is
 * full, and accepted again once deletes have made room.
 *
 * How members agree: the alarm is not a replicated flag but a function of replicated state.
 * Every member computes it from its store's `keyspaceBytes`, which is the same on every
 * member at the same applied index: NOSPACE is on while keyspace + requestBytesMax > quota (no
 * room left for one more request of the largest size). Only the leader accepts writes, so the
 * leader's view is the one that refuses; a follower's `/v1/status` shows the same alarm once it
 * has applied as far. The check happens before proposing, never at apply, so members with
 * different quotas cannot diverge: they only refuse differently while leading.
 *
 * A write is refused when it adds data (a put, a transaction with a put in either branch, a
 * lease grant) and either the alarm is on or its estimated growth, on top of the keyspace and
 * of what this member's writes still in flight may add, passes the quota. Deletes, lease
 * revokes and compactions always pass: they are how space is freed.
 */
import { KV_KEY_OVERHEAD_BYTES, type KvTxnOp } from '../core/kv/index.js';
import { CoordError } from '../errors.js';
import type { KvWrite } from '../runtime/core/consistent-core.js';

/** What a lease record costs the store, for the quota. Unit: bytes. */
const LEASE_RECORD_BYTES = 256;

export type Alarm = 'NOSPACE';

export class SpaceQuota {
  /** Growth of this member's admitted writes not yet answered. Unit: bytes. */
  private inflightBytes = 0;

  constructor(
    private readonly store: { readonly keyspaceBytes: number },
    private readonly quotaBytes: number,
    private readonly requestBytesMax: number,
  ) {}

  /** The alarms on at this member's applied state. */
  get alarms(): readonly Alarm[] {
    return this.store.keyspaceBytes + this.requestBytesMax > this.quotaBytes ? ['NOSPACE'] : [];
  }

  /**
   * Admits `write` (call `release` once it is answered, however) or refuses it with
   * CONCLAVE_QUOTA_EXCEEDED.
   */
  admit(write: KvWrite): { readonly release: () => void } | CoordError {
    const growth = growthBytes(write);
    if (growth === 0) return { release: () => undefined };
    const keyspace = this.store.keyspaceBytes;
    if (this.alarms.length > 0 || keyspace + this.inflightBytes + growth > this.quotaBytes) {
      return new CoordError('CONCLAVE_QUOTA_EXCEEDED', `the store is full: ${keyspace} bytes of `
        + `keys and values (${this.inflightBytes} more in flight) and this write adds about `
        + `${growth}, over the quota of ${this.quotaBytes} (--quota-backend-bytes; alarm NOSPACE `
        + 'while less than --max-request-bytes is left); delete keys to make room');
    }
    this.inflightBytes += growth;
    let released = false;
    return { release: () => {
      if (released) return;
      released = true;
      this.inflightBytes -= growth;
    } };
  }
}

/** What `write` may add to `keyspaceBytes` at most (overwrites counted in full). Unit: bytes. */
export function growthBytes(write: KvWrite): number {
  switch (write.kind) {
    case 'put':
      return putBytes(write);
    case 'txn':
      return Math.max(opsBytes(write.success), opsBytes(write.failure));
    case 'lease-grant':
      return LEASE_RECORD_BYTES;
    default:
      return 0;
  }
}

function putBytes(op: { readonly key: string; readonly value: string }): number {
  return op.key.length + op.value.length + KV_KEY_OVERHEAD_BYTES;
}

function opsBytes(ops: readonly KvTxnOp[]): number {
  let sum = 0;
  for (const op of ops) if (op.kind === 'put') sum += putBytes(op);
  return sum;
}
