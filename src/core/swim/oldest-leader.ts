/**
 * The emergent leader (Joshi, "Emergent Leader"): every member orders the live members it sees
 * by age and takes the oldest as the coordinator, so members with the same view agree without
 * voting. It prefers availability, so a partition can give one coordinator per side; the
 * split-brain strategies (Akka's split-brain resolver) decide which side may act:
 *
 * - keep-majority: act while more than half of the last stable membership is live in this
 *   view; with exactly half, the side holding the oldest stable member acts (Akka breaks that
 *   tie by lowest address; age is our order).
 * - keep-oldest: act on the side holding the oldest stable member, unless it is alone there
 *   while others exist (Akka's `down-if-alone`): then the other side acts.
 * - static-quorum: act while at least `staticQuorumSize` members are live in this view.
 *
 * "The last stable membership" grows at once when a member joins or returns while this side
 * acts (a live addition can never help a minority), and drops its dead members only once the
 * live set has stayed unchanged for the stable-after time, and again only while this side
 * acts: a minority can never promote itself by waiting. A graceful leave shrinks it at once
 * (a departure is no failure).
 */
import { assert, assertNever } from '../assert.js';
import type { NodeId } from '../ids.js';
import type { SplitBrainStrategy } from './config.js';
import { isOlder } from './member-table.js';

/** What the strategy needs to know about one side, as seen from one member. */
export interface SideView {
  /** Members of the last stable membership. */
  readonly stableSize: number;
  /** How many of them are live in this view. */
  readonly stableLive: number;
  /** Whether the oldest member of the last stable membership is live in this view. */
  readonly oldestStableLive: boolean;
  /** All live members in this view (stable or not). */
  readonly liveCount: number;
}

/** Whether this side may act under `strategy` (see the module comment). */
export function sideMayAct(
  strategy: SplitBrainStrategy, staticQuorumSize: number, side: SideView,
): boolean {
  assert(side.stableLive <= side.stableSize,
    () => `stable live ${side.stableLive} > stable size ${side.stableSize}`);
  switch (strategy) {
    case 'keep-majority': {
      const twice = 2 * side.stableLive;
      if (twice > side.stableSize) return true;
      return twice === side.stableSize && side.stableSize > 0 && side.oldestStableLive;
    }
    case 'keep-oldest':
      if (side.stableSize <= 1) return side.stableLive === side.stableSize;
      if (side.oldestStableLive) return side.stableLive > 1;
      // The oldest is elsewhere: act only if it is alone there (all the others are here).
      return side.stableLive === side.stableSize - 1;
    case 'static-quorum':
      return side.liveCount >= staticQuorumSize;
    default:
      return assertNever(strategy, 'split-brain strategy');
  }
}

/** A member's age and liveness, as the stable membership needs them. */
export interface AgedMember {
  readonly id: NodeId;
  readonly age: number;
  readonly live: boolean;
}

/**
 * The last stable membership: a set of ids, how many of them are live (kept incrementally so
 * the check after every message is O(1)), and its oldest member (recomputed only when the set
 * or an age in it changes).
 */
export class StableMembership {
  private ids = new Set<NodeId>();
  private live = 0;
  private oldestCached: AgedMember | undefined;
  private oldestValid = false;

  get size(): number {
    return this.ids.size;
  }

  get liveCount(): number {
    return this.live;
  }

  has(id: NodeId): boolean {
    return this.ids.has(id);
  }

  /** The members of the set, for a joiner to adopt. */
  members(): NodeId[] {
    return [...this.ids];
  }

  /** Replaces the set with `members` (all of them should be live). */
  reset(members: Iterable<AgedMember>): void {
    this.ids = new Set();
    this.live = 0;
    for (const member of members) {
      this.ids.add(member.id);
      if (member.live) this.live++;
    }
    this.oldestValid = false;
  }

  /** Adds a member (a new or returning live member, absorbed at once while the side acts). */
  add(member: AgedMember): void {
    if (this.ids.has(member.id)) return;
    this.ids.add(member.id);
    if (member.live) this.live++;
    // A newcomer is usually the youngest: keep the cached oldest unless it is older.
    const oldest = this.oldestCached;
    if (this.oldestValid && oldest !== undefined && isOlder(member, oldest)) {
      this.oldestCached = member;
    } else if (this.oldestValid && oldest === undefined) {
      this.oldestCached = member;
    }
  }

  /** A member of the set became live or stopped being live. */
  onLiveChange(id: NodeId, live: boolean): void {
    if (!this.ids.has(id)) return;
    this.live += live ? 1 : -1;
    assert(this.live >= 0 && this.live <= this.ids.size,
      () => `stable live count out of range: ${this.live} of ${this.ids.size}`);
  }

  /** A member left gracefully: it no longer counts at all. */
  remove(id: NodeId, wasLive: boolean): void {
    if (!this.ids.delete(id)) return;
    if (wasLive) this.live--;
    if (this.oldestCached?.id === id) this.oldestValid = false;
  }

  /**
   * An age in the set changed (a member rejoined younger). O(1): only a change of the cached
   * oldest itself forces the next `oldest()` to look again (after a heal, hundreds of members
   * rejoin younger at once, and each used to cost every member an O(N) pass).
   */
  onAgeChange(member: AgedMember): void {
    if (!this.ids.has(member.id) || !this.oldestValid) return;
    const oldest = this.oldestCached;
    if (oldest === undefined || oldest.id === member.id) {
      this.oldestValid = false;
    } else if (isOlder(member, oldest)) {
      this.oldestCached = member;
    }
  }

  /**
   * The oldest member of the set, whatever its state; `lookup` is used only when the cached
   * answer is stale (then O(size)), so the usual call costs O(1).
   */
  oldest(lookup: (id: NodeId) => AgedMember | undefined): NodeId | undefined {
    if (!this.oldestValid) {
      let best: AgedMember | undefined;
      for (const id of this.ids) {
        const member = lookup(id);
        if (member !== undefined && (best === undefined || isOlder(member, best))) best = member;
      }
      this.oldestCached = best;
      this.oldestValid = true;
    }
    return this.oldestCached?.id;
  }
}
