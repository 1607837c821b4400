/**
 * The latest of each member's frames, so that a page opened later sees the cluster's recent
 * past at once: per member, its Raft events (a ring), its rates (five minutes), its last
 * sample (as the text it came in) and its lease list (kept whole by applying each delta).
 * Bounded like the feed itself (EVENT_FEED_DEFAULTS).
 */
import type { NodeId } from '../core/ids.js';
import {
  EVENT_FEED_DEFAULTS, type FeedFrame, type LeaseRow, type LeasesFrame, type RatesFrame,
  type StampedRaftEvent,
} from '../server/event-feed.js';

interface MemberFrames {
  events: StampedRaftEvent[];
  rates: RatesFrame[];
  sampleText?: string;
  leases?: { atMs: number; total: number; rows: Map<number, LeaseRow> };
}

/** Members remembered (a cluster has at most a few dozen). */
const MEMBERS_MAX = 64;

export class MemberFrameCache {
  private readonly members = new Map<string, MemberFrames>();

  /** A sample, as the text that came (samples are most of the frames: never decoded here). */
  noteSample(member: string, text: string): void {
    const entry = this.entry(member);
    if (entry !== undefined) entry.sampleText = text;
  }

  note(frame: Exclude<FeedFrame, { type: 'sample' }>): void {
    const entry = this.entry(frame.member);
    if (entry === undefined) return;
    switch (frame.type) {
      case 'history':
        entry.events = frame.events.slice(-EVENT_FEED_DEFAULTS.raftEventsMax);
        entry.rates = frame.rates.slice(-EVENT_FEED_DEFAULTS.ratesMax);
        return;
      case 'raft-event':
        push(entry.events, { member: frame.member, atMs: frame.atMs, event: frame.event },
          EVENT_FEED_DEFAULTS.raftEventsMax);
        return;
      case 'rates':
        push(entry.rates, frame, EVENT_FEED_DEFAULTS.ratesMax);
        return;
      case 'leases':
        return applyLeases(entry, frame);
    }
  }

  /** What a new page gets: each member's history and its last sample, as frame texts. */
  textsForNewPage(): string[] {
    const texts: string[] = [];
    for (const [member, entry] of this.members) {
      texts.push(JSON.stringify({ type: 'history', member: member as NodeId,
        events: entry.events, rates: entry.rates }));
      if (entry.sampleText !== undefined) texts.push(entry.sampleText);
    }
    return texts;
  }

  /** Each member's whole lease list known here (a leader's), for a page that starts showing it. */
  fullLeases(): LeasesFrame[] {
    return [...this.members].flatMap(([member, { leases }]) => leases === undefined ? [] : [{
      type: 'leases', member: member as NodeId, atMs: leases.atMs, full: true,
      leases: [...leases.rows.values()], removed: [], total: leases.total }]);
  }

  /** Forgets the lease lists (nobody shows them, so their deltas stop coming). */
  clearLeases(): void {
    for (const entry of this.members.values()) delete entry.leases;
  }

  clear(): void {
    this.members.clear();
  }

  private entry(member: string): MemberFrames | undefined {
    const found = this.members.get(member);
    if (found !== undefined) return found;
    if (this.members.size >= MEMBERS_MAX) return undefined;
    const created: MemberFrames = { events: [], rates: [] };
    this.members.set(member, created);
    return created;
  }
}

function applyLeases(entry: MemberFrames, frame: LeasesFrame): void {
  // A delta with no full list before it (asked for before this cache was) is dropped; the
  // peer sends a full one to each new asker.
  if (!frame.full && entry.leases === undefined) return;
  const rows = frame.full || entry.leases === undefined ? new Map<number, LeaseRow>()
    : entry.leases.rows;
  for (const id of frame.removed) rows.delete(id);
  for (const row of frame.leases) {
    if (rows.size < EVENT_FEED_DEFAULTS.leasesMax || rows.has(row.id)) rows.set(row.id, row);
  }
  entry.leases = { atMs: frame.atMs, total: frame.total, rows };
}

function push<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}
