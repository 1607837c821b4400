/**
 * The queue of membership updates waiting to be piggybacked (SWIM §4.1). It keeps at most one
 * update per member (newer news about a member replaces older), hands out the least-sent
 * updates first, and drops an update once it has been sent `retransmitLimit` times. Updates
 * sit in buckets by transmit count, so choosing a piggyback costs O(limit + chosen), never
 * O(queue length): a member of a 1,000-member cluster pays the same per message as one of ten.
 */
import { assert } from '../assert.js';
import type { NodeId } from '../ids.js';
import { estimateUpdateBytes, type GossipUpdate } from './messages.js';

interface Entry {
  readonly update: GossipUpdate;
  readonly bytes: number;
  transmits: number;
}

export class BroadcastQueue {
  private readonly byMember = new Map<NodeId, Entry>();
  /** buckets[t] holds the entries sent t times, in the order they were queued. */
  private readonly buckets: Map<NodeId, Entry>[] = [];

  get size(): number {
    return this.byMember.size;
  }

  /** Queues `update`, replacing anything queued about the same member. */
  enqueue(update: GossipUpdate): void {
    this.remove(update.member);
    const entry: Entry = { update, bytes: estimateUpdateBytes(update), transmits: 0 };
    this.byMember.set(update.member, entry);
    this.bucket(0).set(update.member, entry);
  }

  /** The queued update about `member`, if any. */
  queued(member: NodeId): GossipUpdate | undefined {
    return this.byMember.get(member)?.update;
  }

  /**
   * Up to `countMax` updates within `bytesMax` (by `estimateUpdateBytes`), least-sent first.
   * Each one chosen counts as a transmission; those reaching `retransmitLimit` are dropped.
   */
  take(countMax: number, bytesMax: number, retransmitLimit: number): GossipUpdate[] {
    assert(retransmitLimit >= 1, () => `retransmit limit must be >= 1: ${retransmitLimit}`);
    // Most messages of a quiet cluster find the queue empty: no iterator per bucket then.
    if (this.byMember.size === 0 || countMax <= 0) return [];
    const chosen: Entry[] = [];
    let bytes = 0;
    // Skips of updates that do not fit are bounded, so one huge address cannot make us scan.
    let skipsLeft = countMax;
    for (let t = 0; t < this.buckets.length && chosen.length < countMax; t++) {
      const bucket = this.bucket(t);
      if (bucket.size === 0) continue;
      for (const entry of bucket.values()) {
        if (chosen.length >= countMax) break;
        if (bytes + entry.bytes > bytesMax) {
          if (--skipsLeft < 0) break;
          continue;
        }
        bytes += entry.bytes;
        chosen.push(entry);
      }
    }
    // Moved after the scan, so an entry is never met twice in one call.
    for (const entry of chosen) this.transmitted(entry, retransmitLimit);
    return chosen.map((entry) => entry.update);
  }

  private transmitted(entry: Entry, retransmitLimit: number): void {
    const member = entry.update.member;
    this.bucket(entry.transmits).delete(member);
    entry.transmits++;
    if (entry.transmits >= retransmitLimit) {
      this.byMember.delete(member);
    } else {
      this.bucket(entry.transmits).set(member, entry);
    }
  }

  private remove(member: NodeId): void {
    const entry = this.byMember.get(member);
    if (entry === undefined) return;
    this.byMember.delete(member);
    this.bucket(entry.transmits).delete(member);
  }

  private bucket(transmits: number): Map<NodeId, Entry> {
    while (this.buckets.length <= transmits) this.buckets.push(new Map());
    return this.buckets[transmits] as Map<NodeId, Entry>;
  }
}
