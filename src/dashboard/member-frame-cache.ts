/**
 * The latest of each member's frames, so that a page opened later sees the cluster's recent
 * past at once: per member, its Raft events (a ring), its rates (five minutes), its last
 * sample and its last lease list. Bounded like the feed itself (EVENT_FEED_DEFAULTS).
 */
import type { NodeId } from '../core/ids.js';
import { EVENT_FEED_DEFAULTS, type FeedFrame, type RatesFrame, type StampedRaftEvent } from
  '../server/event-feed.js';

interface MemberFrames {
  events: StampedRaftEvent[];
  rates: RatesFrame[];
  sample?: FeedFrame;
  leases?: FeedFrame;
}

/** Members remembered (a cluster has at most a few dozen). */
const MEMBERS_MAX = 64;

export class MemberFrameCache {
  private readonly members = new Map<string, MemberFrames>();

  note(frame: FeedFrame): void {
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
      case 'sample':
        entry.sample = frame;
        return;
      case 'leases':
        entry.leases = frame;
        return;
    }
  }

  framesForNewPage(): FeedFrame[] {
    const frames: FeedFrame[] = [];
    for (const [member, entry] of this.members) {
      frames.push({ type: 'history', member: member as NodeId, events: entry.events,
        rates: entry.rates });
      if (entry.sample !== undefined) frames.push(entry.sample);
      if (entry.leases !== undefined) frames.push(entry.leases);
    }
    return frames;
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

function push<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}
