/**
 * The idempotent receiver's memory (Raft thesis §6.3): per client, the highest sequence applied
 * and its result, so that a retried command returns the saved result instead of applying twice.
 *
 * Bounded two ways, both deterministic (every replica forgets the same clients at the same
 * entry): at most `clientsMax` records, evicting the client applied least recently (records are
 * kept in a Map in order of their latest apply, i.e. by log index); and a record whose latest
 * apply is more than `clientIdleMsMax` of log time old is dropped. A forgotten client is new
 * again: its next command is applied whatever its sequence, so at-most-once holds while the
 * client's record is kept (it is active within the idle time and among the most recent
 * `clientsMax` clients).
 */
import type { KvApplyResult } from './types.js';

export interface KvClientRecord {
  readonly clientId: string;
  /** Highest sequence applied for the client. */
  readonly sequence: number;
  /** Log time of its apply. Unit: ms (leader-stamped). */
  readonly appliedAtMs: number;
  /** What the apply returned, returned again to a retry. */
  readonly result: KvApplyResult;
}

/** How a command's client stamp compares with the saved record. */
export type ClientCheck =
  | { readonly kind: 'new' }
  | { readonly kind: 'retry'; readonly result: KvApplyResult }
  | { readonly kind: 'stale'; readonly sequenceApplied: number };

export class ClientTable {
  /** Least recently applied first (Map iteration is insertion order; updates re-insert). */
  private readonly records = new Map<string, KvClientRecord>();

  constructor(records: readonly KvClientRecord[] = []) {
    for (const record of records) this.records.set(record.clientId, record);
  }

  get size(): number {
    return this.records.size;
  }

  check(clientId: string, sequence: number): ClientCheck {
    const record = this.records.get(clientId);
    if (record === undefined || sequence > record.sequence) return { kind: 'new' };
    if (sequence === record.sequence) return { kind: 'retry', result: record.result };
    return { kind: 'stale', sequenceApplied: record.sequence };
  }

  /** Saves the client's latest result and evicts the least recent clients beyond `clientsMax`. */
  save(record: KvClientRecord, clientsMax: number): void {
    this.records.delete(record.clientId);
    this.records.set(record.clientId, record);
    for (const clientId of this.records.keys()) {
      if (this.records.size <= clientsMax) break;
      this.records.delete(clientId);
    }
  }

  /** Forgets clients idle for more than `idleMsMax` at log time `nowMs`. */
  expire(nowMs: number, idleMsMax: number): void {
    // Records are in apply order and log time never decreases, so the oldest come first.
    for (const [clientId, record] of this.records) {
      if (nowMs - record.appliedAtMs <= idleMsMax) break;
      this.records.delete(clientId);
    }
  }

  get(clientId: string): KvClientRecord | undefined {
    return this.records.get(clientId);
  }

  /** The records, least recently applied first (for snapshots). */
  toArray(): KvClientRecord[] {
    return [...this.records.values()];
  }
}
