/**
 * The queue of membership updates waiting to be piggybacked (SWIM §4.1). It keeps at most one
 * update per member (newer news about a member replaces older), hands out the least-sent
 * updates first and, among those sent equally often, the newest first; it drops an update
 * once it has been sent `retransmitLimit` times. Updates sit in tiers by transmit count, each
 * tier an intrusive doubly linked list, newest at the head, so choosing a piggyback costs
 * O(limit + chosen) and moving an update to the next tier O(1), with no allocation: a member
 * of a 1,000-member cluster pays the same per message as one of ten. (Tiers were Maps before:
 * a Map that is drained from the front keeps its deleted slots until it rehashes, and every
 * iteration walked over them; that was a fifth of a 1,000-member simulation's time.)
 *
 * Why newest first: when news comes in faster than gossip can carry it (a loss burst over
 * 1,000 members makes hundreds of suspicions at once), oldest-first made a fresh refutation
 * wait behind every suspicion queued before it, often for longer than the suspicion timeout,
 * and the refuted suspicions then ended live members (docs/gossip.md, "Storms"). Newest first
 * sends what supersedes the backlog at once, as hashicorp/memberlist's queue does; the
 * backlog's old news about a member is replaced by the newest anyway.
 *
 * Bound: one entry per member this member knows of, so the member table's size bounds it.
 */
import { assert } from '../assert.js';
import type { NodeId } from '../ids.js';
import { estimateUpdateBytes, type GossipUpdate } from './messages.js';

interface Entry {
  readonly update: GossipUpdate;
  readonly bytes: number;
  transmits: number;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/** One tier: the entries sent `transmits` times, oldest first. */
interface Tier {
  head: Entry | undefined;
  tail: Entry | undefined;
  size: number;
}

export class BroadcastQueue {
  private readonly byMember = new Map<NodeId, Entry>();
  /** tiers[t] holds the entries sent t times, in the order they were queued. */
  private readonly tiers: Tier[] = [];

  get size(): number {
    return this.byMember.size;
  }

  /** Queues `update`, replacing anything queued about the same member. */
  enqueue(update: GossipUpdate): void {
    this.remove(update.member);
    const entry: Entry = {
      update, bytes: estimateUpdateBytes(update), transmits: 0, prev: undefined, next: undefined,
    };
    this.byMember.set(update.member, entry);
    this.prepend(this.tier(0), entry);
  }

  /** The queued update about `member`, if any. */
  queued(member: NodeId): GossipUpdate | undefined {
    return this.byMember.get(member)?.update;
  }

  /** Drops what is queued about `member`, if anything. */
  remove(member: NodeId): void {
    const entry = this.byMember.get(member);
    if (entry === undefined) return;
    this.byMember.delete(member);
    this.unlink(this.tier(entry.transmits), entry);
  }

  /**
   * Up to `countMax` updates within `bytesMax` (by `estimateUpdateBytes`), least-sent first.
   * Each one chosen counts as a transmission; those reaching `retransmitLimit` are dropped.
   */
  take(
    countMax: number, bytesMax: number, retransmitLimit: number, first?: NodeId,
  ): GossipUpdate[] {
    assert(retransmitLimit >= 1, () => `retransmit limit must be >= 1: ${retransmitLimit}`);
    if (this.byMember.size === 0 || countMax <= 0) return [];
    const chosen: Entry[] = [];
    let bytes = 0;
    // The update about `first` (this member's own refutation) goes first, whatever its tier:
    // only this member can make it, and every member holding the accusation needs it.
    const own = first === undefined ? undefined : this.byMember.get(first);
    if (own !== undefined && own.bytes <= bytesMax) {
      chosen.push(own);
      bytes += own.bytes;
    }
    // Skips of updates that do not fit are bounded, so one huge address cannot make us scan.
    let skipsLeft = countMax;
    const tiers = this.tiers;
    scan: for (let t = 0; t < tiers.length && chosen.length < countMax; t++) {
      for (let entry = (tiers[t] as Tier).head; entry !== undefined; entry = entry.next) {
        if (chosen.length >= countMax) break scan;
        if (entry === own) continue;
        if (bytes + entry.bytes > bytesMax) {
          if (--skipsLeft < 0) break scan;
          continue;
        }
        bytes += entry.bytes;
        chosen.push(entry);
      }
    }
    // Moved after the scan, so an entry is never met twice in one call.
    const out: GossipUpdate[] = [];
    for (const entry of chosen) {
      out.push(entry.update);
      this.transmitted(entry, retransmitLimit);
    }
    return out;
  }

  private transmitted(entry: Entry, retransmitLimit: number): void {
    this.unlink(this.tier(entry.transmits), entry);
    entry.transmits++;
    if (entry.transmits >= retransmitLimit) {
      this.byMember.delete(entry.update.member);
    } else {
      this.prepend(this.tier(entry.transmits), entry);
    }
  }

  private prepend(tier: Tier, entry: Entry): void {
    entry.prev = undefined;
    entry.next = tier.head;
    if (tier.head === undefined) tier.tail = entry;
    else tier.head.prev = entry;
    tier.head = entry;
    tier.size++;
  }

  private unlink(tier: Tier, entry: Entry): void {
    if (entry.prev === undefined) tier.head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === undefined) tier.tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = undefined;
    entry.next = undefined;
    tier.size--;
    assert(tier.size >= 0, 'broadcast tier size went negative');
  }

  private tier(transmits: number): Tier {
    while (this.tiers.length <= transmits) {
      this.tiers.push({ head: undefined, tail: undefined, size: 0 });
    }
    return this.tiers[transmits] as Tier;
  }
}
