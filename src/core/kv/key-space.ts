/**
 * The live keys: a Map for point lookups plus the keys in order for ranges, held as a list of
 * sorted blocks of at most `KEY_BLOCK_KEYS_MAX` keys. One flat sorted array made inserting a
 * new key a splice of the whole array: at 100,000 keys that was a third of a replica's CPU in
 * the put benchmark (issue #9). With blocks, an insert or delete is two binary searches and a
 * splice of at most one block (plus, now and then, a splice of the short list of blocks).
 *
 * Invariants: every block is non-empty and sorted; every key of a block is below every key of
 * the next block; the blocks together hold exactly the Map's keys.
 *
 * Captures (for snapshots taken in steps): `capture()` copies the blocks' key lists (cheap: about
 * a millisecond per million keys) and, until released, every change records the key's value from
 * before its first change since the capture, so the capture reads the keys exactly as they were
 * while the store goes on applying. A capture costs memory for the keys changed while it is
 * open; release it when done.
 */
import { assert } from '../assert.js';
import { KV_KEY_OVERHEAD_BYTES } from './config.js';
import type { KeyValue, KvKeySelector } from './types.js';
import { compareKeys } from './text.js';

/**
 * Keys per block at most; a fuller block splits in two. Small enough that a splice inside a
 * block is a short memmove, large enough that the list of blocks stays short (a few hundred at
 * 100,000 keys).
 */
export const KEY_BLOCK_KEYS_MAX = 512;

/** The live keys as they were when `KeySpace.capture()` was called. */
export interface KeySpaceCapture {
  readonly size: number;
  /** The next captured keys in key order, about `bytesTarget` of `sizeOf`; empty at the end. */
  next(bytesTarget: number, sizeOf: (kv: KeyValue) => number): KeyValue[];
  /** Starts over from the first captured key. */
  rewind(): void;
  /** Stops recording changes for this capture (idempotent). */
  release(): void;
}

interface OpenCapture {
  /** Each key's value from before its first change since the capture. */
  readonly before: Map<string, KeyValue>;
}

export class KeySpace {
  private readonly kvs = new Map<string, KeyValue>();
  private readonly blocks: string[][] = [];
  private readonly captures: OpenCapture[] = [];
  private bytes = 0;

  /** `blockKeysMax`: see KEY_BLOCK_KEYS_MAX (tests use tiny blocks to split and merge often). */
  constructor(private readonly blockKeysMax = KEY_BLOCK_KEYS_MAX) {
    assert(Number.isSafeInteger(blockKeysMax) && blockKeysMax >= 2,
      () => `key-space: blockKeysMax must be an integer >= 2 (is ${blockKeysMax})`);
  }

  get size(): number {
    return this.kvs.size;
  }

  /** Estimated memory of the live keys (see `KvStore.keyspaceBytes`). Unit: bytes. */
  get sizeBytes(): number {
    return this.bytes;
  }

  get(key: string): KeyValue | undefined {
    return this.kvs.get(key);
  }

  set(kv: KeyValue): void {
    const prev = this.kvs.get(kv.key);
    if (prev === undefined) {
      this.insertKey(kv.key);
    } else {
      this.bytes -= keyValueSizeBytes(prev);
      if (this.captures.length > 0) this.remember(prev);
    }
    this.kvs.set(kv.key, kv);
    this.bytes += keyValueSizeBytes(kv);
  }

  delete(key: string): void {
    const prev = this.kvs.get(key);
    if (prev === undefined) return;
    if (this.captures.length > 0) this.remember(prev);
    this.kvs.delete(key);
    this.bytes -= keyValueSizeBytes(prev);
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

  /**
   * Fills an empty key space with `kvs`, which must be sorted by key and unique (a checked
   * snapshot's): blocks half full, as splits leave them.
   */
  loadSorted(kvs: readonly KeyValue[]): void {
    assert(this.kvs.size === 0, () => `key-space: loadSorted into ${this.kvs.size} keys`);
    const per = Math.max(1, this.blockKeysMax >>> 1);
    for (let i = 0; i < kvs.length; i += per) {
      const block: string[] = [];
      for (const kv of kvs.slice(i, i + per)) {
        block.push(kv.key);
        this.kvs.set(kv.key, kv);
        this.bytes += keyValueSizeBytes(kv);
      }
      this.blocks.push(block);
    }
    assert(this.kvs.size === kvs.length, () => `key-space: loadSorted of duplicate keys`);
  }

  /** The keys as of now, read later in steps (see the module comment). */
  capture(): KeySpaceCapture {
    const open: OpenCapture = { before: new Map() };
    this.captures.push(open);
    const blocks = this.blocks.map((block) => block.slice());
    let released = false;
    let b = 0;
    let i = 0;
    const release = (): void => {
      if (released) return;
      released = true;
      const at = this.captures.indexOf(open);
      if (at >= 0) this.captures.splice(at, 1);
      open.before.clear();
    };
    return {
      size: this.kvs.size,
      next: (bytesTarget, sizeOf) => {
        assert(!released, 'key-space: read of a released capture');
        const out: KeyValue[] = [];
        let bytes = 0;
        for (; b < blocks.length && bytes < bytesTarget; b++, i = 0) {
          const block = blocks[b] as string[];
          for (; i < block.length && bytes < bytesTarget; i++) {
            const key = block[i] as string;
            const kv = open.before.get(key) ?? this.kvs.get(key) as KeyValue;
            out.push(kv);
            bytes += sizeOf(kv);
          }
          if (i < block.length) break;
        }
        return out;
      },
      rewind: () => {
        b = 0;
        i = 0;
      },
      release,
    };
  }

  /** Records `prev` (the value before a change) for every capture that lacks the key. */
  private remember(prev: KeyValue): void {
    for (const { before } of this.captures) {
      if (!before.has(prev.key)) before.set(prev.key, prev);
    }
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

/** What one live key counts towards `KeySpace.sizeBytes`. Unit: bytes. */
export function keyValueSizeBytes(kv: KeyValue): number {
  return kv.key.length + kv.value.length + KV_KEY_OVERHEAD_BYTES;
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
