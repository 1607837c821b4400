/**
 * The state of a recorded run at virtual time t (pure, for the replay view and its tests):
 * which nodes are up, paused or drifting, which links are cut, each node's role and term, the
 * leaders of every term so far (two in one term is the bug election safety catches), the
 * messages in flight, client operations, and the verdict once its time has come. For the
 * membership scenarios (gossip, heartbeat): each member's standing (alive, suspect, dead, left,
 * with its incarnation; heartbeat: who suspects it, by detector) and the emergent leader.
 */
import type { RecordedEvent, RecordedMessage, SimRecording } from '../../sim/sim-recorder.js';

export interface NodeAt {
  readonly id: string;
  up: boolean;
  pausedUntilMs: number;
  driftRate: number;
  role: string;
  term: number;
  /** A member of the cluster (false: a client of it, in lease and core). */
  readonly member: boolean;
  /** Gossip: the last news of its standing (alive, suspect, dead, left); undefined: none. */
  state: string | undefined;
  incarnation: number | undefined;
  /** Heartbeat: detector -> the observers that suspect it now. */
  readonly suspectedBy: Map<string, Set<string>>;
}

/** The emergent leader (gossip) as the members named it at some instant. */
export type LeaderAt = Extract<RecordedEvent, { kind: 'leader' }>;

export interface ReplayAt {
  readonly nodes: Map<string, NodeAt>;
  readonly cutLinks: readonly (readonly string[])[];
  /** Leaders of each term up to t: term -> nodes that led it. */
  readonly leadersByTerm: Map<number, string[]>;
  readonly inFlight: readonly RecordedMessage[];
  readonly recent: readonly RecordedEvent[];
  readonly violations: readonly Extract<RecordedEvent, { kind: 'violation' }>[];
  readonly clientOps: readonly Extract<RecordedEvent, { kind: 'client' }>[];
  /** Gossip: the latest answers, newest first (at most 12). */
  readonly emergentLeaders: readonly LeaderAt[];
}

/** Latest delivery delay the view looks back for (longer flights are not drawn). */
const FLIGHT_MS_MAX = 500;
const RECENT_MAX = 40;
/** Messages in flight handed to the view at most (a 1,000-member gossip has thousands). */
export const IN_FLIGHT_MAX = 300;
const LEADERS_MAX = 12;

export class ReplayModel {
  readonly events: readonly RecordedEvent[];
  /** Messages by send time. */
  readonly messages: readonly RecordedMessage[];
  /** Every instant worth stepping to (events and deliveries), sorted. */
  readonly steps: readonly number[];
  private readonly eventTimes: readonly number[];
  private readonly sendTimes: readonly number[];
  /** A node's role before any event: follower in Raft runs, alive in membership runs. */
  private readonly initialRole: string;

  constructor(readonly recording: SimRecording) {
    this.events = [...recording.events].sort((a, b) => a.atMs - b.atMs);
    this.messages = [...recording.messages].sort((a, b) => a[0] - b[0]);
    this.eventTimes = this.events.map((e) => e.atMs);
    this.sendTimes = this.messages.map((m) => m[0]);
    const instants = new Set<number>(this.events.map((e) => e.atMs));
    for (const m of this.messages) instants.add(m[0]);
    this.steps = [...instants].sort((a, b) => a - b);
    this.initialRole = this.events.some((e) => e.kind === 'role') ? 'follower' : 'alive';
  }

  get endMs(): number {
    return this.recording.simulatedMs;
  }

  /** The instant of the first violation, if a checker fired. */
  get verdictMs(): number | undefined {
    return this.events.find((e) => e.kind === 'violation')?.atMs;
  }

  nextStep(t: number): number {
    return this.steps[upperBound(this.steps, t)] ?? this.endMs;
  }

  previousStep(t: number): number {
    return this.steps[lowerBound(this.steps, t) - 1] ?? 0;
  }

  at(t: number): ReplayAt {
    const members = this.recording.members === undefined ? undefined
      : new Set(this.recording.members);
    const nodes = new Map<string, NodeAt>(this.recording.nodes.map((id) => [id, {
      id, up: true, pausedUntilMs: -1, driftRate: 0, role: this.initialRole, term: 0,
      member: members?.has(id) ?? true, state: undefined, incarnation: undefined,
      suspectedBy: new Map() }]));
    let cutLinks: readonly (readonly string[])[] = [];
    const leadersByTerm = new Map<number, string[]>();
    const emergentLeaders: LeaderAt[] = [];
    const upto = upperBound(this.eventTimes, t);
    for (let i = 0; i < upto; i++) {
      const e = this.events[i]!;
      cutLinks = applyEvent(e, nodes, leadersByTerm, cutLinks, this.initialRole);
      if (e.kind === 'leader') emergentLeaders.push(e);
    }
    const done = this.events.slice(0, upto);
    return {
      nodes, cutLinks, leadersByTerm, inFlight: this.inFlightAt(t),
      recent: done.filter((e) => e.kind !== 'client').slice(-RECENT_MAX),
      violations: done.filter((e): e is Extract<RecordedEvent, { kind: 'violation' }> =>
        e.kind === 'violation'),
      clientOps: this.events.filter((e): e is Extract<RecordedEvent, { kind: 'client' }> =>
        e.kind === 'client' && e.atMs <= t && (e.endMs < 0 || e.endMs >= t - 200)).slice(-12),
      emergentLeaders: emergentLeaders.slice(-LEADERS_MAX).reverse(),
    };
  }

  private inFlightAt(t: number): RecordedMessage[] {
    const sends = this.messages;
    let i = lowerBound(this.sendTimes, t - FLIGHT_MS_MAX);
    const out: RecordedMessage[] = [];
    for (; i < sends.length && sends[i]![0] <= t; i++) {
      const m = sends[i]!;
      if (m[4] < 0 ? t - m[0] < 5 : m[4] >= t) out.push(m);
    }
    // The latest sent, when there are more than the view can draw.
    return out.length > IN_FLIGHT_MAX ? out.slice(-IN_FLIGHT_MAX) : out;
  }
}

function applyEvent(e: RecordedEvent, nodes: Map<string, NodeAt>,
  leadersByTerm: Map<number, string[]>, cutLinks: readonly (readonly string[])[],
  initialRole: string): readonly (readonly string[])[] {
  const node = 'node' in e ? nodes.get(e.node) : undefined;
  switch (e.kind) {
    case 'crash':
      if (node) Object.assign(node, { up: false, role: 'down' });
      return cutLinks;
    case 'restart':
      if (node) Object.assign(node, { up: true, role: initialRole });
      return cutLinks;
    case 'pause':
      if (node) node.pausedUntilMs = e.atMs + e.durationMs;
      return cutLinks;
    case 'resume':
      if (node) node.pausedUntilMs = e.atMs;
      return cutLinks;
    case 'drift':
      if (node) node.driftRate = e.driftRate;
      return cutLinks;
    case 'partition':
      return e.links;
    case 'heal':
      return [];
    case 'member':
      if (node) applyStanding(node, e);
      return cutLinks;
    case 'role':
      if (node) Object.assign(node, { role: e.to, term: e.term });
      if (e.to === 'leader') {
        const list = leadersByTerm.get(e.term) ?? [];
        if (!list.includes(e.node)) list.push(e.node);
        leadersByTerm.set(e.term, list);
      }
      return cutLinks;
    default:
      return cutLinks;
  }
}

function applyStanding(node: NodeAt, e: Extract<RecordedEvent, { kind: 'member' }>): void {
  if (e.detector === undefined) {
    node.state = e.state;
    if (e.incarnation !== undefined) node.incarnation = e.incarnation;
    return;
  }
  const by = node.suspectedBy.get(e.detector) ?? new Set<string>();
  if (e.state === 'suspect') by.add(e.by);
  else by.delete(e.by);
  node.suspectedBy.set(e.detector, by);
}

/**
 * What a node is at t, in one word for the view: down, paused, then its membership standing
 * (gossip), suspect when a detector suspects it (heartbeat), else its Raft role.
 */
export function nodeStateAt(node: NodeAt, t: number): string {
  if (!node.up) return 'down';
  if (node.pausedUntilMs > t) return 'paused';
  if (node.state !== undefined) return node.state;
  if (node.suspectedBy.size > 0) {
    return [...node.suspectedBy.values()].some((s) => s.size > 0) ? 'suspect' : 'alive';
  }
  return node.member ? node.role : 'client';
}

/** First index whose value is >= x. */
function lowerBound(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose value is > x. */
function upperBound(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
