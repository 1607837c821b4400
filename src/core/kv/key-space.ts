/**
 * The live keys: a Map for point lookups plus the keys in order for ranges, held as a list of
 * sorted blocks of at most `KEY_BLOCK_KEYS_MAX` keys. One flat sorted array made inserting a
 * new key a splice of the whole array: at 100,000 keys that was a third of a replica's CPU in
 * the put benchmark (issue #9). With blocks, an insert or delete is two binary searches and a
 * splice of at most one block (plus, now and then, a splice of the short list of blocks).
 *
 * Invariants: every block is non-empty and sorted; every key of a block is below every key of
 * the next block; the blocks together hold exactly the Map's keys.
 */
import { assert } from '../assert.js';
import type { KeyValue, KvKeySelector } from './types.js';
import { compareKeys } from './text.js';

/**
 * Keys per block at most; a fuller block splits in two. Small enough that a splice inside a
 * block is a short memmove, large enough that the list of blocks stays short (a few hundred at
 * 100,000 keys).
 */
export const KEY_BLOCK_KEYS_MAX = 512;

export class KeySpace {
  private readonly kvs = new Map<string, KeyValue>();
  private readonly blocks: string[][] = [];

  /** `blockKeysMax`: see KEY_BLOCK_KEYS_MAX (tests use tiny blocks to split and merge often). */
  constructor(private readonly blockKeysMax = KEY_BLOCK_KEYS_MAX) {
    assert(Number.isSafeInteger(blockKeysMax) && blockKeysMax >= 2,
      () => `key-space: blockKeysMax must be an integer >= 2 (is ${blockKeysMax})`);
  }

  get size(): number {
    return this.kvs.size;
  }

  get(key: string): KeyValue | undefined {
    return this.kvs.get(key);
  }

  set(kv: KeyValue): void {
    if (!this.kvs.has(kv.key)) this.insertKey(kv.key);
    this.kvs.set(kv.key, kv);
  }

  delete(key: string): void {
    if (!this.kvs.delete(key)) return;
    const b = this.blockOf(key);
    const block = this.blocks[b] as string[];
    const i = lowerBound(block, key);
    assert(block[i] === key, () => `key-space: ${JSON.stringify(key)} missing from its block`);
    block.splice(i, 1);
    if (block.length === 0) this.blocks.splice(b, 1);
    else if (block.length * 4 < this.blockKeysMax) this.mergeAround(b);
  }

  /** The selected key-values, in key order. */
  select(selector: KvKeySelector): KeyValue[] {
    const out: KeyValue[] = [];
    if (selector.prefix !== true) {
      const kv = this.kvs.get(selector.key);
      if (kv !== undefined) out.push(kv);
      return out;
    }
    let b = this.blockOf(selector.key);
    const first = this.blocks[b];
    let i = first === undefined ? 0 : lowerBound(first, selector.key);
    for (; b < this.blocks.length; b++, i = 0) {
      const block = this.blocks[b] as string[];
      for (; i < block.length; i++) {
        const key = block[i] as string;
        if (!key.startsWith(selector.key)) return out;
        out.push(this.kvs.get(key) as KeyValue);
      }
    }
    return out;
  }

  /** Every key-value in key order (for snapshots). */
  all(): KeyValue[] {
    const out: KeyValue[] = [];
    for (const block of this.blocks) {
      for (const key of block) out.push(this.kvs.get(key) as KeyValue);
    }
    return out;
  }

  private insertKey(key: string): void {
    if (this.blocks.length === 0) {
      this.blocks.push([key]);
      return;
    }
    const b = this.blockOf(key);
    const block = this.blocks[b] as string[];
    block.splice(lowerBound(block, key), 0, key);
    if (block.length > this.blockKeysMax) {
      this.blocks.splice(b + 1, 0, block.splice(block.length >>> 1));
    }
  }

  /**
   * Joins the small block `b` (under a quarter full) with a neighbour when both fit in half a
   * block, so deletes cannot leave many tiny blocks.
   */
  private mergeAround(b: number): void {
    const block = this.blocks[b] as string[];
    const next = this.blocks[b + 1];
    const previous = this.blocks[b - 1];
    const half = this.blockKeysMax / 2;
    if (next !== undefined && block.length + next.length <= half) {
      this.blocks.splice(b, 2, block.concat(next));
    } else if (previous !== undefined && previous.length + block.length <= half) {
      this.blocks.splice(b - 1, 2, previous.concat(block));
    }
  }

  /**
   * The block where `key` is or belongs: the last block whose first key is <= `key` (the first
   * block when `key` is below them all). 0 when there are no blocks.
   */
  private blockOf(key: string): number {
    let low = 0;
    let high = this.blocks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys((this.blocks[mid] as string[])[0] as string, key) <= 0) low = mid + 1;
      else high = mid;
    }
    return low === 0 ? 0 : low - 1;
  }
}

/** Index of the first key >= `key` in the sorted `keys`. */
function lowerBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareKeys(keys[mid] as string, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
