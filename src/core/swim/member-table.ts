/**
 * One member's view of the membership: a record per member (O(N) small records), the
 * randomized round-robin probe order (SWIM §4.3), random sampling of live members in O(k)
 * expected time, and the oldest live member, cached so that asking for the leader after each
 * message costs O(1).
 */
import { assert } from '../assert.js';
import type { Generation, Incarnation, NodeId } from '../ids.js';
import { randomInt, shuffle, type Random } from '../random.js';
import type { CoordinatorClaim, GossipUpdate } from './messages.js';
import { isLiveState, type MemberAge, type MemberState, type SwimMemberInfo } from './types.js';

/** A member record; mutated only through `MemberTable` so that its counts stay right. */
export interface MemberRecord {
  readonly id: NodeId;
  address: string;
  state: MemberState;
  incarnation: Incarnation;
  age: MemberAge;
  generation: Generation | undefined;
  /** For suspect and dead: the accuser whose news set the state. */
  by: NodeId | undefined;
  stateChangedMs: number;
  /** For dead members: the highest coordinator claim seen when the member was declared. */
  deadClaim: CoordinatorClaim | undefined;
  /** Position in `MemberTable.list`, for O(1) removal. */
  listIndex: number;
}

/** Whether `a` is older than `b`: smaller age, then smaller id. */
export function isOlder(a: { age: number; id: string }, b: { age: number; id: string }): boolean {
  return a.age < b.age || (a.age === b.age && a.id < b.id);
}

export class MemberTable {
  private readonly records = new Map<NodeId, MemberRecord>();
  /** All records, for uniform random sampling by index. */
  private readonly list: MemberRecord[] = [];
  private probeOrder: NodeId[] = [];
  private probeIndex = 0;
  private readonly counts: Record<MemberState, number> = { alive: 0, suspect: 0, dead: 0, left: 0 };
  private oldest: MemberRecord | undefined;
  private oldestValid = true;

  constructor(private readonly selfId: NodeId, private readonly random: Random) {}

  get(id: NodeId): MemberRecord | undefined {
    return this.records.get(id);
  }

  /** Live members (alive or suspect), this member included once it is admitted. */
  get liveCount(): number {
    return this.counts.alive + this.counts.suspect;
  }

  count(state: MemberState): number {
    return this.counts[state];
  }

  get size(): number {
    return this.records.size;
  }

  values(): IterableIterator<MemberRecord> {
    return this.records.values();
  }

  /** Adds a record; it joins the probe order at a random place (memberlist does the same). */
  add(fields: Omit<MemberRecord, 'listIndex' | 'deadClaim'>): MemberRecord {
    assert(!this.records.has(fields.id), () => `member ${fields.id} is already known`);
    // One literal, not a spread: V8 gives every object spread from another its own hidden
    // class, which made each record field access megamorphic (about 30x slower at N = 1,000).
    const record: MemberRecord = {
      id: fields.id, address: fields.address, state: fields.state,
      incarnation: fields.incarnation, age: fields.age, generation: fields.generation,
      by: fields.by, stateChangedMs: fields.stateChangedMs, deadClaim: undefined,
      listIndex: this.list.length,
    };
    this.records.set(record.id, record);
    this.list.push(record);
    this.counts[record.state]++;
    if (record.id !== this.selfId && isLiveState(record.state)) {
      // A random place keeps the detection bound low when many members join at once.
      const at = randomInt(this.random, 0, this.probeOrder.length + 1);
      this.probeOrder.splice(at, 0, record.id);
      if (at < this.probeIndex) this.probeIndex++;
    }
    this.noteMaybeOlder(record);
    return record;
  }

  /** Changes a record's state, keeping the counts and the oldest-member cache right. */
  setState(record: MemberRecord, state: MemberState, nowMs: number): void {
    if (record.state === state) return;
    const wasLive = isLiveState(record.state);
    this.counts[record.state]--;
    this.counts[state]++;
    record.state = state;
    record.stateChangedMs = nowMs;
    const live = isLiveState(state);
    if (wasLive && !live && this.oldest === record) this.oldestValid = false;
    if (!wasLive && live) {
      this.noteMaybeOlder(record);
      // Back from the dead: probe it again (it was dropped from the order when it died).
      if (record.id !== this.selfId) this.probeOrder.push(record.id);
    }
  }

  setAge(record: MemberRecord, age: MemberAge): void {
    if (record.age === age) return;
    record.age = age;
    if (this.oldest === record) this.oldestValid = false;
    this.noteMaybeOlder(record);
  }

  /** The oldest live member (O(1) usually; O(N) after the cached one died or left). */
  oldestLive(): MemberRecord | undefined {
    if (!this.oldestValid) {
      this.oldest = undefined;
      this.oldestValid = true;
      for (const record of this.list) this.noteMaybeOlder(record);
    }
    return this.oldest;
  }

  /**
   * The next member to probe, in a randomized round-robin: each round visits every live member
   * once in a fresh random order (SWIM §4.3), so each is probed within two rounds. At the end
   * of a round, records dead or left for longer than `retainMs` are forgotten. Amortized O(1).
   */
  nextProbeTarget(nowMs: number, retainMs: number): MemberRecord | undefined {
    for (let newRounds = 0; newRounds < 2;) {
      if (this.probeIndex >= this.probeOrder.length) {
        this.startProbeRound(nowMs, retainMs);
        newRounds++;
      }
      const id = this.probeOrder[this.probeIndex++];
      if (id === undefined) continue;
      const record = this.records.get(id);
      if (record !== undefined && isLiveState(record.state) && id !== this.selfId) return record;
    }
    return undefined;
  }

  /**
   * Up to `count` distinct random live members other than those in `exclude`, by rejection
   * sampling over all records: O(count) expected while most members are live, and bounded
   * either way (a member in a mass failure may get fewer than it asked for).
   */
  sampleLive(count: number, exclude: readonly NodeId[]): MemberRecord[] {
    return this.sample(count, exclude, (r) => isLiveState(r.state));
  }

  /** Like `sampleLive`, also accepting members dead for less than `deadWithinMs`. */
  sampleGossipTargets(
    count: number, exclude: readonly NodeId[], nowMs: number, deadWithinMs: number,
  ): MemberRecord[] {
    return this.sample(count, exclude, (r) => isLiveState(r.state)
      || (r.state === 'dead' && nowMs - r.stateChangedMs < deadWithinMs));
  }

  /**
   * A random member that is dead in this view (not left), for reconnects: rejection sampling
   * while the dead are at least a sixteenth of the records (O(1) expected), a scan without
   * allocation otherwise (O(N), but then reconnects are rare: see `SwimMember`).
   */
  randomDead(): MemberRecord | undefined {
    const dead = this.counts.dead;
    if (dead === 0) return undefined;
    const list = this.list;
    if (16 * dead >= list.length) {
      for (let attempt = 0; attempt < 64; attempt++) {
        const record = list[randomInt(this.random, 0, list.length)] as MemberRecord;
        if (record.state === 'dead') return record;
      }
    }
    let pick = randomInt(this.random, 0, dead);
    for (const record of list) {
      if (record.state === 'dead' && pick-- === 0) return record;
    }
    return undefined;
  }

  /** Full state for push-pull and join-ack: one update per record, addresses included. */
  snapshot(): GossipUpdate[] {
    return this.list.map(toUpdate);
  }

  info(record: MemberRecord): SwimMemberInfo {
    const base = {
      id: record.id, address: record.address, state: record.state,
      incarnation: record.incarnation, age: record.age, stateChangedMs: record.stateChangedMs,
    };
    return record.generation === undefined ? base : { ...base, generation: record.generation };
  }

  private sample(
    count: number, exclude: readonly NodeId[], accept: (r: MemberRecord) => boolean,
  ): MemberRecord[] {
    const chosen: MemberRecord[] = [];
    if (count <= 0 || this.list.length === 0) return chosen;
    const attemptsMax = 4 * count + 8;
    for (let attempt = 0; attempt < attemptsMax && chosen.length < count; attempt++) {
      const record = this.list[randomInt(this.random, 0, this.list.length)] as MemberRecord;
      if (record.id === this.selfId || exclude.includes(record.id)) continue;
      if (!accept(record) || chosen.includes(record)) continue;
      chosen.push(record);
    }
    return chosen;
  }

  private startProbeRound(nowMs: number, retainMs: number): void {
    this.forgetExpired(nowMs, retainMs);
    const order: NodeId[] = [];
    for (const record of this.list) {
      if (record.id !== this.selfId && isLiveState(record.state)) order.push(record.id);
    }
    this.probeOrder = shuffle(this.random, order);
    this.probeIndex = 0;
  }

  private forgetExpired(nowMs: number, retainMs: number): void {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const record = this.list[i] as MemberRecord;
      if (isLiveState(record.state) || nowMs - record.stateChangedMs < retainMs) continue;
      this.removeAt(i);
    }
  }

  private removeAt(index: number): void {
    const record = this.list[index] as MemberRecord;
    assert(record.id !== this.selfId, () => `never forget self: ${record.id}`);
    const last = this.list.pop() as MemberRecord;
    if (last !== record) {
      this.list[index] = last;
      last.listIndex = index;
    }
    this.records.delete(record.id);
    this.counts[record.state]--;
  }

  private noteMaybeOlder(record: MemberRecord): void {
    if (!isLiveState(record.state) || !this.oldestValid) return;
    if (this.oldest === undefined || isOlder(record, this.oldest)) this.oldest = record;
  }
}

export function toUpdate(record: MemberRecord): GossipUpdate {
  const update: {
    member: NodeId; state: MemberState; incarnation: Incarnation; age: MemberAge;
    address: string; generation?: Generation; by?: NodeId;
  } = {
    member: record.id, state: record.state, incarnation: record.incarnation,
    age: record.age, address: record.address,
  };
  if (record.generation !== undefined) update.generation = record.generation;
  if (record.by !== undefined && (record.state === 'suspect' || record.state === 'dead')) {
    update.by = record.by;
  }
  return update;
}
