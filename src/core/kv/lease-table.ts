/**
 * The replicated lease records and which keys each lease holds. The key-to-lease link lives on
 * each `KeyValue.lease` (the source of truth, carried in snapshots); this table keeps the
 * reverse index, rebuilt from the key-values on restore.
 *
 * Iteration is in lease id order on every replica: leases are inserted in grant order (ids are
 * growing log indexes) or, on restore, in the snapshot's id order. Keys of one lease are handed
 * out sorted, never in Set order (which differs between a replica that applied the puts and one
 * that restored a snapshot).
 */
import { assert } from '../assert.js';
import { compareKeys } from './text.js';
import type { KvLease } from './types.js';

interface LeaseEntry {
  lease: KvLease;
  readonly keys: Set<string>;
}

export class LeaseTable {
  private readonly entries = new Map<number, LeaseEntry>();

  constructor(leases: readonly KvLease[] = []) {
    for (const lease of leases) this.entries.set(lease.id, { lease, keys: new Set() });
  }

  get size(): number {
    return this.entries.size;
  }

  get(id: number): KvLease | undefined {
    return this.entries.get(id)?.lease;
  }

  has(id: number): boolean {
    return this.entries.has(id);
  }

  /** Every lease in id order. */
  all(): KvLease[] {
    return [...this.entries.values()].map((entry) => entry.lease);
  }

  add(lease: KvLease): void {
    assert(!this.entries.has(lease.id), () => `lease ${lease.id} granted twice`);
    this.entries.set(lease.id, { lease, keys: new Set() });
  }

  /** Replaces the record of an existing lease (its keys stay). */
  update(lease: KvLease): void {
    const entry = this.entries.get(lease.id);
    assert(entry !== undefined, () => `update of unknown lease ${lease.id}`);
    entry.lease = lease;
  }

  remove(id: number): void {
    this.entries.delete(id);
  }

  /** The lease's keys in key order. */
  keysOf(id: number): string[] {
    const keys = [...(this.entries.get(id)?.keys ?? [])];
    return keys.sort(compareKeys);
  }

  keyCountOf(id: number): number {
    return this.entries.get(id)?.keys.size ?? 0;
  }

  attach(id: number, key: string): void {
    const entry = this.entries.get(id);
    assert(entry !== undefined, () => `key ${key} attached to unknown lease ${id}`);
    entry.keys.add(key);
  }

  detach(id: number, key: string): void {
    this.entries.get(id)?.keys.delete(key);
  }
}
