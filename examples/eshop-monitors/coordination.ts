/**
 * How the monitors agree on one leader, behind one small interface so the monitor's own code is
 * the same in both modes:
 *
 * - gossip (this file): the monitors form a Conclave gossip membership (`joinCluster`, SWIM);
 *   the oldest live member leads (the seeds' Emergent Leader) and its generation is the token.
 *   No lease: a leader that was paused or cut off learns it was replaced only when gossip
 *   reaches it, so until then it still believes it leads. Only the supervisor's Fence stops its
 *   orders.
 * - core (core-coordination.ts): a lease-backed election in a Conclave consistent core; the
 *   token is the election's fencing token and the leadership signal aborts before the lease can
 *   end on the server. Restarts go through `runOnce`, so a new leader never repeats one.
 * - etcd: the same code on an etcd cluster (`connect({ backend: 'etcd' })`).
 */
import { joinCluster, type Membership, type MembershipEventOf } from 'conclave';
import type { EshopEventBody } from './events.js';

/** One leadership, as the monitor that holds it sees it. */
export interface MonitorLeadership {
  /** Sent with every order; the supervisor refuses tokens lower than the highest it saw. */
  readonly token: number;
  /** The generation (gossip) or term (core) of this leadership: 1, 2, 3 ... */
  readonly term: number;
  /** Aborts when this monitor learns the leadership has ended. */
  readonly signal: AbortSignal;
  /**
   * Core and etcd modes: runs `fn` once per task for the whole line of leaders (the client's
   * `runOnce`: recorded done in the store under the fencing token). Gossip has no store.
   */
  readonly runOnce?: (taskId: string, fn: () => Promise<unknown>) =>
    Promise<{ readonly ran: boolean; readonly result: unknown; readonly doneBy: number }>;
}

export interface Coordination {
  /** Joins or connects; resolves once this monitor takes part. */
  start(): Promise<void>;
  /** The leadership this monitor holds now, in its own view; undefined when it does not lead. */
  current(): MonitorLeadership | undefined;
  /** Gives leadership up gracefully (resign, leave) and stops. */
  stop(): Promise<void>;
  /** Where others reach this monitor (gossip), for the runner's log. */
  readonly address: string | undefined;
}

/** Longest wait for a seed to admit this monitor. Unit: ms. */
const JOIN_DEADLINE_MS = 30_000;

interface HeldLeadership extends MonitorLeadership {
  readonly controller: AbortController;
}

export interface GossipCoordinationOptions {
  readonly name: string;
  /** host:port to listen on for gossip (port 0: the OS picks). */
  readonly bind: string;
  /** Monitors already running; [] bootstraps (this monitor is then the oldest). */
  readonly seeds: readonly string[];
  readonly emit: (event: EshopEventBody) => void;
}

export class GossipCoordination implements Coordination {
  private membership: Membership | undefined;
  private held: HeldLeadership | undefined;

  constructor(private readonly options: GossipCoordinationOptions) {}

  get address(): string | undefined {
    return this.membership?.address;
  }

  async start(): Promise<void> {
    const membership = await joinCluster({
      name: this.options.name,
      bind: this.options.bind,
      seeds: [...this.options.seeds],
      // LOCAL: 200 ms probes, a crashed member declared dead in about a second on loopback.
      profile: 'local',
      // With three monitors a lone one (paused, cut off) never leads: it is a minority.
      splitBrainStrategy: 'keep-majority',
      // The LOCAL default (2 s per seed round) is too short for a loaded machine, where a
      // seed may take seconds to answer; a monitor that cannot join is of no use anyway.
      joinDeadlineMs: JOIN_DEADLINE_MS,
    });
    this.membership = membership;
    membership.on('leader-changed', (event) => this.onLeaderChanged(event));
  }

  current(): MonitorLeadership | undefined {
    const held = this.held;
    if (held === undefined || held.signal.aborted) return undefined;
    // Ask the membership again right now: the event may not have been delivered yet.
    const leader = this.membership?.leader();
    if (leader?.id !== this.options.name || leader.generation !== held.token) return undefined;
    return held;
  }

  async stop(): Promise<void> {
    this.end('stopped');
    await this.membership?.leave();
  }

  private onLeaderChanged(event: MembershipEventOf<'leader-changed'>): void {
    const leader = event.leader;
    this.options.emit({
      kind: 'leader-seen', reason: event.reason,
      ...(leader === undefined ? {} : { leader: leader.id, generation: leader.generation }),
    });
    const mine = leader?.id === this.options.name ? leader.generation : undefined;
    if (this.held !== undefined && this.held.token !== mine) this.end(event.reason);
    if (mine !== undefined && this.held === undefined) {
      const controller = new AbortController();
      // Emergent Leader + Generation Clock: the generation is the fencing token and the term.
      this.held = { token: mine, term: mine, signal: controller.signal, controller };
      this.options.emit({ kind: 'became-leader', token: mine, term: mine });
    }
  }

  private end(reason: string): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    held.controller.abort();
    this.options.emit({ kind: 'lost-leadership', token: held.token, reason });
  }
}
