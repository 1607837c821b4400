/**
 * The live keys: a Map for point lookups plus a sorted array of keys for ranges. Inserting or
 * removing a key costs a binary search and an array splice (a memmove: microseconds even at a
 * hundred thousand keys), and a prefix range is a binary search then a scan.
 */
import type { KeyValue, KvKeySelector } from './types.js';
import { compareKeys } from './text.js';

export class KeySpace {
  private readonly kvs = new Map<string, KeyValue>();
  private readonly sortedKeys: string[] = [];

  get size(): number {
    return this.sortedKeys.length;
  }

  get(key: string): KeyValue | undefined {
    return this.kvs.get(key);
  }

  set(kv: KeyValue): void {
    if (!this.kvs.has(kv.key)) this.sortedKeys.splice(this.lowerBound(kv.key), 0, kv.key);
    this.kvs.set(kv.key, kv);
  }

  delete(key: string): void {
    if (!this.kvs.delete(key)) return;
    this.sortedKeys.splice(this.lowerBound(key), 1);
  }

  /** The selected key-values, in key order. */
  select(selector: KvKeySelector): KeyValue[] {
    const out: KeyValue[] = [];
    if (selector.prefix !== true) {
      const kv = this.kvs.get(selector.key);
      if (kv !== undefined) out.push(kv);
      return out;
    }
    for (let i = this.lowerBound(selector.key); i < this.sortedKeys.length; i++) {
      const key = this.sortedKeys[i] as string;
      if (!key.startsWith(selector.key)) break;
      out.push(this.kvs.get(key) as KeyValue);
    }
    return out;
  }

  /** Every key-value in key order (for snapshots). */
  all(): KeyValue[] {
    return this.sortedKeys.map((key) => this.kvs.get(key) as KeyValue);
  }

  /** Index of the first key >= `key`. */
  private lowerBound(key: string): number {
    let low = 0;
    let high = this.sortedKeys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys(this.sortedKeys[mid] as string, key) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
