/**
 * Which leader each counted member names, kept as counts per (leader, generation), so that
 * "does every member name the same leader?" costs O(distinct answers), never O(members), after
 * each change. A member counts from its admission until it crashes or leaves.
 */
import { assert } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import type { SwimLeader } from '../../../core/swim/index.js';

/** No leader named (joining, minority side, claim not heard yet). */
const NONE = '';

export class LeaderAgreement {
  private readonly keyOf = new Map<NodeId, string>();
  private readonly counts = new Map<string, number>();
  private readonly leaderOfKey = new Map<string, NodeId>();

  /** Members counted. */
  get size(): number {
    return this.keyOf.size;
  }

  has(member: NodeId): boolean {
    return this.keyOf.has(member);
  }

  add(member: NodeId, leader: SwimLeader | undefined): void {
    assert(!this.keyOf.has(member), () => `${member} counted twice`);
    const key = this.keyFor(leader);
    this.keyOf.set(member, key);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  remove(member: NodeId): void {
    const key = this.keyOf.get(member);
    if (key === undefined) return;
    this.keyOf.delete(member);
    this.decrement(key);
  }

  /** `member` now names `leader` (ignored for members not counted). */
  set(member: NodeId, leader: SwimLeader | undefined): void {
    const before = this.keyOf.get(member);
    if (before === undefined) return;
    const key = this.keyFor(leader);
    if (key === before) return;
    this.keyOf.set(member, key);
    this.decrement(before);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** The leader every counted member names, when they all name the same one. */
  unanimous(): { readonly key: string; readonly leader: NodeId } | undefined {
    const size = this.keyOf.size;
    if (size === 0) return undefined;
    for (const [key, count] of this.counts) {
      if (count !== size) continue;
      const leader = this.leaderOfKey.get(key);
      return leader === undefined ? undefined : { key, leader };
    }
    return undefined;
  }

  /** How many distinct answers members give (for messages). */
  describe(): string {
    const parts: string[] = [];
    for (const [key, count] of this.counts) parts.push(`${key === NONE ? 'none' : key}×${count}`);
    return parts.join(', ');
  }

  private keyFor(leader: SwimLeader | undefined): string {
    if (leader === undefined) return NONE;
    const key = `${leader.id}@${leader.generation}`;
    if (!this.leaderOfKey.has(key)) this.leaderOfKey.set(key, leader.id);
    return key;
  }

  private decrement(key: string): void {
    const count = (this.counts.get(key) ?? 0) - 1;
    if (count <= 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }
}
