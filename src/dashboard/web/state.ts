/**
 * What the page knows of the cluster, built from the feed's frames (dashboard.ts). Bounded
 * like the feed: a ring of Raft events per member, five minutes of rates.
 */
import type {
  FeedFrame, LeaseRow, LeasesFrame, RatesFrame, SampleFrame, StampedRaftEvent,
} from '../../server/event-feed.js';
import type { RecipeRow } from '../cluster-view.js';

export interface MemberView {
  readonly id: string;
  sample: SampleFrame | undefined;
  /** When the last frame of this member arrived here. Unit: page ms (Date.now). */
  lastFrameAtMs: number;
  /** The serving member's link to it: down since when, and why. */
  link: { up: boolean; reason: string; atMs: number } | undefined;
  events: StampedRaftEvent[];
  rates: RatesFrame[];
}

export interface Hello {
  readonly servedBy: string;
  readonly members: readonly string[];
  readonly writes: string;
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
}

/**
 * A time the serving member's link to a member went down, and when it came back. Kept after
 * it ends: `conclave dev` restarts a killed member within a second or two, and "n3 stopped
 * answering" is part of why leadership moved, so it must not vanish when n3 is back.
 */
export interface Outage {
  readonly member: string;
  readonly downAtMs: number;
  readonly reason: string;
  upAtMs: number | undefined;
}

/** A leader's leases as of `atMs` (its wall clock), received here at `receivedAtMs`. */
export interface LeaseList {
  readonly atMs: number;
  readonly receivedAtMs: number;
  readonly rows: Map<number, LeaseRow>;
  readonly total: number;
}

const EVENTS_MAX = 256;
const RATES_MAX = 300;
/** Outages remembered (the oldest go first). */
const OUTAGES_MAX = 32;

export class ClusterState {
  hello: Hello | undefined;
  readonly members = new Map<string, MemberView>();
  recipes: readonly RecipeRow[] = [];
  /** Each leader's lease list (kept whole from its full list and deltas), by member. */
  private readonly leaseLists = new Map<string, LeaseList>();
  revision = 0;
  /** Links that went down, oldest first; an open one has no upAtMs. */
  readonly outages: Outage[] = [];
  /** Bumped on every change, so views redraw only when something changed. */
  version = 0;

  /** The latest lease list (the current leader's), if the page has one. */
  get leases(): LeaseList | undefined {
    let latest: LeaseList | undefined;
    for (const list of this.leaseLists.values()) {
      if (latest === undefined || list.atMs > latest.atMs) latest = list;
    }
    return latest;
  }

  /** The page stopped showing the leases: they stop coming, so what it has goes stale. */
  dropLeases(): void {
    this.leaseLists.clear();
    this.version++;
  }

  member(id: string): MemberView {
    let found = this.members.get(id);
    if (found === undefined) {
      found = { id, sample: undefined, lastFrameAtMs: 0, link: undefined, events: [], rates: [] };
      this.members.set(id, found);
    }
    return found;
  }

  apply(frame: FeedFrame | Record<string, unknown>): void {
    this.version++;
    const type = frame['type' as keyof typeof frame] as string;
    if (type === 'hello') {
      this.hello = frame as unknown as Hello;
      for (const id of this.hello.members) this.member(id);
      return;
    }
    if (type === 'member-link') {
      const f = frame as { member: string; up: boolean; reason: string; atMs: number };
      this.member(f.member).link = { up: f.up, reason: f.reason, atMs: f.atMs };
      this.noteOutage(f.member, f.up, f.reason, f.atMs);
      return;
    }
    if (type === 'recipes') {
      const f = frame as { recipes: RecipeRow[]; revision: number };
      this.recipes = f.recipes;
      this.revision = f.revision;
      return;
    }
    this.applyMemberFrame(frame as FeedFrame);
  }

  private noteOutage(member: string, up: boolean, reason: string, atMs: number): void {
    const open = this.outages.find((o) => o.member === member && o.upAtMs === undefined);
    if (up) {
      if (open !== undefined) open.upAtMs = atMs;
      return;
    }
    // A page that reconnects is told again of a link that is still down.
    if (open !== undefined) return;
    this.outages.push({ member, downAtMs: atMs, reason, upAtMs: undefined });
    if (this.outages.length > OUTAGES_MAX) this.outages.shift();
  }

  private applyMemberFrame(frame: FeedFrame): void {
    const view = this.member(frame.member);
    view.lastFrameAtMs = Date.now();
    switch (frame.type) {
      case 'history':
        view.events = mergeEvents(view.events, frame.events);
        view.rates = frame.rates.slice(-RATES_MAX);
        return;
      case 'raft-event':
        view.events.push({ member: frame.member, atMs: frame.atMs, event: frame.event });
        if (view.events.length > EVENTS_MAX) view.events.shift();
        return;
      case 'rates':
        view.rates.push(frame);
        if (view.rates.length > RATES_MAX) view.rates.shift();
        return;
      case 'sample':
        view.sample = frame;
        return;
      case 'leases':
        return this.applyLeases(frame);
    }
  }

  private applyLeases(frame: LeasesFrame): void {
    const had = this.leaseLists.get(frame.member);
    // A delta without the full list before it cannot be placed; the next full one will be.
    if (!frame.full && had === undefined) return;
    const rows = frame.full || had === undefined ? new Map<number, LeaseRow>() : had.rows;
    for (const id of frame.removed) rows.delete(id);
    for (const row of frame.leases) rows.set(row.id, row);
    this.leaseLists.set(frame.member, { atMs: frame.atMs, receivedAtMs: Date.now(), rows,
      total: frame.total });
  }

  /** Every member's events, merged (the leadership timeline's input). */
  allEvents(): StampedRaftEvent[] {
    return [...this.members.values()].flatMap((m) => m.events);
  }

  /**
   * A member is down when the serving member's link to it is down, or when none of its
   * frames came for three sample intervals (plus slack for a loaded machine).
   */
  isDown(view: MemberView, nowMs: number): boolean {
    if (view.id === this.hello?.servedBy) return false;
    if (view.link !== undefined && !view.link.up) return true;
    const intervalMs = Math.max(50, this.hello?.heartbeatMs ?? 100);
    return view.lastFrameAtMs === 0 || nowMs - view.lastFrameAtMs > 3 * intervalMs + 500;
  }

  /** The leader most members agree on, from the latest samples. */
  leader(): { id: string; term: number } | undefined {
    let best: { id: string; term: number } | undefined;
    for (const view of this.members.values()) {
      const s = view.sample;
      if (s === undefined || this.isDown(view, Date.now())) continue;
      if (s.role === 'leader' && (best === undefined || s.term > best.term)) {
        best = { id: s.member, term: s.term };
      }
    }
    return best;
  }
}

function mergeEvents(had: readonly StampedRaftEvent[], got: readonly StampedRaftEvent[]):
  StampedRaftEvent[] {
  const key = (e: StampedRaftEvent): string => `${e.atMs}/${JSON.stringify(e.event)}`;
  const seen = new Set(had.map(key));
  return [...had, ...got.filter((e) => !seen.has(key(e)))]
    .sort((a, b) => a.atMs - b.atMs).slice(-EVENTS_MAX);
}
