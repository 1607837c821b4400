/**
 * One member's live feed for the dashboard: what its runtime reports (Raft events with the
 * time they happened, WAL sync and peer round-trip times, requests served) plus a periodic
 * sample of its status, as JSON frames. It subscribes to events and reads the runtime's
 * public status; it never reaches into a core (DESIGN.md §4).
 *
 * Frames (each a JSON object with `type`; docs/dashboard.md lists the fields):
 *   history  — on subscribe: the member's recent Raft events (a bounded ring) and its rates
 *   sample   — every `sampleIntervalMs`: role, term, indexes, each follower's progress and lag
 *   rates    — every second: puts, reads, keep-alives served, each with p99 latency
 *   raft-event — each Raft role, leader, term or transfer event, as it happens
 *   leases   — every second, on the leader only, to the listeners that asked for it (a page
 *              showing the leases tab): the first a full list, then only the leases that
 *              changed (granted, kept alive, keys attached or detached) and those gone
 *
 * The frames are plain data so that they can later ride on the client stream (/v1/stream,
 * issue #17) as one more channel; today they go over a WebSocket (src/dashboard).
 *
 * Bounds: `raftEventsMax` events in the ring, `ratesMax` seconds of rates, `latenciesMax`
 * latencies per second per kind (a uniform sample beyond it), `leasesMax` leases per frame.
 *
 * Cost: each frame is encoded to JSON once, however many listeners it goes to (`json()`), and
 * only when one of them asks for the text. The lease list is built only while someone wants it.
 */
import type { NodeId } from '../core/ids.js';
import type { RaftEvent, RaftStatus } from '../core/raft/index.js';
import type { Clock } from '../ports/clock.js';
import type { Random } from '../core/random.js';

/** What a member serves that the throughput chart counts. */
export type ServedKind = 'put' | 'read' | 'keepalive';

export interface EventFeedConfig {
  /**
   * How often a status sample is taken. Unit: ms. Default: the heartbeat interval (so a
   * follower the leader stops hearing from shows within one heartbeat). Trade-off: shorter
   * is livelier and costs more JSON per second.
   */
  readonly sampleIntervalMs: number;
  /** Raft events kept for late subscribers. Unit: events. Default: 256 (many terms). */
  readonly raftEventsMax: number;
  /** Seconds of rates kept for late subscribers. Unit: seconds. Default: 300 (the chart). */
  readonly ratesMax: number;
  /** Latencies kept per second and kind for the p99. Unit: samples. Default: 2048. */
  readonly latenciesMax: number;
  /** Leases listed per frame (the rest are counted). Unit: leases. Default: 2000. */
  readonly leasesMax: number;
}

export const EVENT_FEED_DEFAULTS: EventFeedConfig = {
  sampleIntervalMs: 100, raftEventsMax: 256, ratesMax: 300, latenciesMax: 2048, leasesMax: 2000,
};

/** A Raft event as the feed carries it: stamped with this member's wall clock. */
export interface StampedRaftEvent {
  readonly member: NodeId;
  readonly atMs: number;
  readonly event: RaftEvent;
}

/** One second of served requests. */
export interface RatesFrame {
  readonly type: 'rates';
  readonly member: NodeId;
  readonly atMs: number;
  readonly perS: Readonly<Record<ServedKind, number>>;
  readonly msP99: Readonly<Record<ServedKind, number | null>>;
}

export interface LeaseRow {
  readonly id: number;
  readonly ttlMs: number;
  /** At the frame's `atMs`, or when this row was last sent in a delta (see LeasesFrame). */
  readonly remainingMs: number | null;
  /** When it expires by the leader's wall clock (`atMs` of the frame + remainingMs). */
  readonly expiresAtMs: number | null;
  readonly keys: readonly string[];
  readonly keyCount: number;
}

export type FeedFrame =
  | { readonly type: 'history'; readonly member: NodeId;
    readonly events: readonly StampedRaftEvent[];
    readonly rates: readonly RatesFrame[] }
  | ({ readonly type: 'raft-event' } & StampedRaftEvent)
  | RatesFrame
  | LeasesFrame
  | SampleFrame;

/**
 * The leader's leases: `full` lists them all (up to leasesMax); otherwise `leases` holds only
 * the rows that changed since the previous frame and `removed` the ids gone since then.
 */
export interface LeasesFrame {
  readonly type: 'leases';
  readonly member: NodeId;
  readonly atMs: number;
  readonly full: boolean;
  readonly leases: readonly LeaseRow[];
  readonly removed: readonly number[];
  readonly total: number;
}

export interface SampleFrame {
  readonly type: 'sample';
  readonly member: NodeId;
  readonly atMs: number;
  readonly role: string;
  readonly term: number;
  readonly leaderId: NodeId | null;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly lastIndex: number;
  readonly revision: number;
  readonly leaseCount: number;
  readonly progress: readonly FollowerProgress[];
  /** WAL sync (fdatasync) latency over the last second. Unit: ms; null: no sync. */
  readonly walSyncMsP99: number | null;
  readonly walSyncMsMax: number | null;
  /** Latest heartbeat round trip to each peer. Unit: ms. */
  readonly peerRttMs: Readonly<Record<string, number>>;
}

export interface FollowerProgress {
  readonly id: NodeId;
  readonly matchIndex: number;
  readonly state: string;
  /** Entries the follower lacks: the leader's last index minus its match index. */
  readonly lagEntries: number;
  /** How long ago the leader first had an entry the follower still lacks. Unit: ms. */
  readonly lagMs: number;
  /** Since the leader last heard from it. Unit: ms. */
  readonly lastContactMsAgo: number;
}

/** What the feed reads: the runtime's public status, and a few figures of the server. */
export interface EventFeedSource {
  readonly id: NodeId;
  status(): RaftStatus;
  readonly revision: () => number;
  readonly leaseCount: () => number;
  /** Leases with remaining TTL (leader only; undefined elsewhere). */
  readonly leases: (max: number) => { rows: LeaseRow[]; total: number } | undefined;
}

/** A frame, and its JSON text (encoded once for every listener, when first asked for). */
type Listener = (frame: FeedFrame, json: () => string) => void;

interface Listening {
  /** Whether this listener gets the leases frames (it shows the leases). */
  leases: boolean;
  /** Whether it has had a full lease list since it asked (deltas follow it). */
  leasesPrimed: boolean;
}

/** A lease whose expiry moved by more than this since the last frame was kept alive. Unit: ms. */
const LEASE_EXPIRY_MOVED_MS = 250;

export class EventFeed {
  private readonly ring: StampedRaftEvent[] = [];
  private readonly ratesRing: RatesFrame[] = [];
  private readonly listeners = new Map<Listener, Listening>();
  /** The rows of the last lease list sent, by id (what the next delta is measured against). */
  private leasesSent = new Map<number, LeaseRow>();
  /** Told when the first listener arrives (true) and when the last leaves (false). */
  private readonly listenedWatchers: Array<(listened: boolean) => void> = [];
  private readonly counts: Record<ServedKind, number> = { put: 0, read: 0, keepalive: 0 };
  private readonly latencies: Record<ServedKind, LatencySample>;
  private readonly walSyncs: LatencySample;
  private readonly peerRttMs = new Map<string, number>();
  /** (wall ms, last index) at each sample, to tell how long a follower has lagged. */
  private readonly indexTimes: { atMs: number; lastIndex: number }[] = [];

  constructor(private readonly source: EventFeedSource, private readonly clock: Clock,
    random: Random, readonly config: EventFeedConfig = EVENT_FEED_DEFAULTS) {
    const sample = (): LatencySample => new LatencySample(config.latenciesMax, random);
    this.latencies = { put: sample(), read: sample(), keepalive: sample() };
    this.walSyncs = sample();
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** The recent Raft events and rates, for a new subscriber. */
  history(): Extract<FeedFrame, { type: 'history' }> {
    return { type: 'history', member: this.source.id, events: [...this.ring],
      rates: [...this.ratesRing] };
  }

  /**
   * Starts sending live frames to `listener` (with the leases frames when `leases`); returns
   * the unsubscribe.
   */
  subscribe(listener: Listener, options: { leases?: boolean } = {}): () => void {
    this.listeners.set(listener, { leases: options.leases === true, leasesPrimed: false });
    if (this.listeners.size === 1) this.tellListened(true);
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.tellListened(false);
    };
  }

  /** Starts or stops sending the leases frames to `listener` (a full list first). */
  setLeasesWanted(listener: Listener, wanted: boolean): void {
    const listening = this.listeners.get(listener);
    if (listening === undefined || listening.leases === wanted) return;
    listening.leases = wanted;
    listening.leasesPrimed = false;
  }

  /** Calls `watcher(true)` when the feed gains its first listener, `(false)` on losing its last. */
  onListenedChange(watcher: (listened: boolean) => void): void {
    this.listenedWatchers.push(watcher);
  }

  private tellListened(listened: boolean): void {
    for (const watcher of this.listenedWatchers) watcher(listened);
  }

  onRaftEvent(event: RaftEvent): void {
    const stamped: StampedRaftEvent = { member: this.source.id, atMs: this.clock.wallMs(), event };
    this.ring.push(stamped);
    if (this.ring.length > this.config.raftEventsMax) this.ring.shift();
    this.emit({ type: 'raft-event', ...stamped });
  }

  onWalSync(durationMs: number): void {
    this.walSyncs.add(durationMs);
  }

  onPeerRoundTrip(peer: string, durationMs: number): void {
    this.peerRttMs.set(peer, durationMs);
  }

  /** A request this member served (answered itself, not redirected). */
  onServed(kind: ServedKind, durationMs: number): void {
    this.counts[kind]++;
    this.latencies[kind].add(durationMs);
  }

  /** Takes a status sample and sends it; the server calls it every sampleIntervalMs. */
  sample(): SampleFrame {
    const status = this.source.status();
    const atMs = this.clock.wallMs();
    this.noteIndex(atMs, status.lastIndex);
    const nowMono = this.clock.monotonicMs();
    const frame: SampleFrame = {
      type: 'sample', member: this.source.id, atMs, role: status.role, term: status.term,
      leaderId: status.leaderId ?? null, commitIndex: status.commitIndex,
      appliedIndex: status.appliedIndex, lastIndex: status.lastIndex,
      revision: this.source.revision(), leaseCount: this.source.leaseCount(),
      progress: status.role !== 'leader' ? [] : status.progress
        .filter((p) => p.id !== this.source.id)
        .map((p) => ({
          id: p.id, matchIndex: p.matchIndex, state: p.state,
          lagEntries: Math.max(0, status.lastIndex - p.matchIndex),
          lagMs: this.lagMs(p.matchIndex, atMs),
          lastContactMsAgo: Math.max(0, Math.round(nowMono - p.lastContactMs)),
        })),
      walSyncMsP99: this.walSyncs.quantile(0.99), walSyncMsMax: this.walSyncs.quantile(1),
      peerRttMs: Object.fromEntries(this.peerRttMs),
    };
    this.emit(frame);
    return frame;
  }

  /** Closes one second of counts (the server calls it every second). */
  closeSecond(): void {
    const kinds: ServedKind[] = ['put', 'read', 'keepalive'];
    const frame: RatesFrame = {
      type: 'rates', member: this.source.id, atMs: this.clock.wallMs(),
      perS: { put: this.counts.put, read: this.counts.read, keepalive: this.counts.keepalive },
      msP99: { put: this.latencies.put.quantile(0.99), read: this.latencies.read.quantile(0.99),
        keepalive: this.latencies.keepalive.quantile(0.99) },
    };
    for (const kind of kinds) {
      this.counts[kind] = 0;
      this.latencies[kind].clear();
    }
    this.walSyncs.clear();
    this.ratesRing.push(frame);
    if (this.ratesRing.length > this.config.ratesMax) this.ratesRing.shift();
    this.emit(frame);
    this.emitLeases(frame.atMs);
  }

  /** The lease list to those who want it: full to the new ones, the changes to the others. */
  private emitLeases(atMs: number): void {
    const wanting = [...this.listeners].filter(([, l]) => l.leases);
    const leases = wanting.length === 0 ? undefined : this.source.leases(this.config.leasesMax);
    if (leases === undefined) {
      // Not the leader (any more): whoever asks gets a full list if it leads again.
      this.leasesSent.clear();
      for (const [, listening] of wanting) listening.leasesPrimed = false;
      return;
    }
    // Against the rows as last sent (not as last seen), so that small moves cannot add up.
    const sent = new Map<number, LeaseRow>();
    const changed: LeaseRow[] = [];
    for (const row of leases.rows) {
      const before = this.leasesSent.get(row.id);
      const moved = leaseChanged(before, row);
      if (moved) changed.push(row);
      sent.set(row.id, moved || before === undefined ? row : before);
    }
    const removed = [...this.leasesSent.keys()].filter((id) => !sent.has(id));
    this.leasesSent = sent;
    const base = { type: 'leases' as const, member: this.source.id, atMs, total: leases.total };
    const full: FeedFrame = { ...base, full: true, leases: leases.rows, removed: [] };
    const delta: FeedFrame = { ...base, full: false, leases: changed, removed };
    const fullJson = memoJson(full);
    const deltaJson = memoJson(delta);
    for (const [listener, listening] of wanting) {
      if (listening.leasesPrimed) listener(delta, deltaJson);
      else listener(full, fullJson);
      listening.leasesPrimed = true;
    }
  }

  private emit(frame: FeedFrame): void {
    if (this.listeners.size === 0) return;
    const json = memoJson(frame);
    for (const listener of this.listeners.keys()) listener(frame, json);
  }

  private noteIndex(atMs: number, lastIndex: number): void {
    const last = this.indexTimes[this.indexTimes.length - 1];
    if (last === undefined || last.lastIndex < lastIndex) this.indexTimes.push({ atMs, lastIndex });
    // A minute of samples is plenty: a follower a minute behind shows "> 60 s".
    while (this.indexTimes.length > 0 && this.indexTimes[0]!.atMs < atMs - 60_000) {
      this.indexTimes.shift();
    }
  }

  /** Since when the leader has had index matchIndex + 1 (the first entry the follower lacks). */
  private lagMs(matchIndex: number, atMs: number): number {
    const firstMissing = this.indexTimes.find((t) => t.lastIndex > matchIndex);
    return firstMissing === undefined ? 0 : Math.max(0, Math.round(atMs - firstMissing.atMs));
  }
}

/** `frame`'s JSON, encoded on the first call only. */
function memoJson(frame: FeedFrame): () => string {
  let text: string | undefined;
  return () => (text ??= JSON.stringify(frame));
}

/** Whether a delta must carry `row`: new, its TTL or keys changed, or it was kept alive. */
function leaseChanged(sent: LeaseRow | undefined, row: LeaseRow): boolean {
  if (sent === undefined) return true;
  if (sent.ttlMs !== row.ttlMs || sent.keyCount !== row.keyCount ||
    sent.keys.join('\n') !== row.keys.join('\n')) return true;
  if (sent.expiresAtMs === null || row.expiresAtMs === null) {
    return sent.expiresAtMs !== row.expiresAtMs;
  }
  return Math.abs(sent.expiresAtMs - row.expiresAtMs) > LEASE_EXPIRY_MOVED_MS;
}

/**
 * Latencies of one window, for a quantile: all of them up to `max`, then a uniform sample
 * (reservoir sampling), so a busy second costs bounded memory.
 */
export class LatencySample {
  private readonly values: number[] = [];
  private sorted: number[] | undefined;
  private seen = 0;

  constructor(private readonly max: number, private readonly random: Random) {}

  add(value: number): void {
    this.seen++;
    this.sorted = undefined;
    if (this.values.length < this.max) {
      this.values.push(value);
      return;
    }
    const slot = this.random.nextUint32() % this.seen;
    if (slot < this.max) this.values[slot] = value;
  }

  /** The q-quantile (0..1) of the window, rounded to 0.01 ms; null when empty. */
  quantile(q: number): number | null {
    if (this.values.length === 0) return null;
    // Sorted once per change: a sample every heartbeat asks twice for the same window.
    const sorted = this.sorted ??= [...this.values].sort((a, b) => a - b);
    const at = Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
    return Math.round(sorted[Math.max(0, at)]! * 100) / 100;
  }

  clear(): void {
    this.values.length = 0;
    this.sorted = undefined;
    this.seen = 0;
  }
}
