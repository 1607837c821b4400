/**
 * A running gossip member as its owner sees it: the view (`members()`, `leader()`), the
 * membership events as a typed EventEmitter, and the way out (`leave()`, `close()`).
 * `joinCluster` builds it; the protocol itself runs in the SWIM runtime underneath.
 *
 * Events are emitted under their kind ('joined', 'suspect', 'alive', 'dead', 'left',
 * 'refuted', 'rejoined', 'join-failed', 'leader-changed') and all of them, in order, under
 * 'event'. Events that happen before `joinCluster` resolves (this member's own 'joined', the
 * members learned from the seed, the first 'leader-changed') are held and emitted once the
 * promise has resolved, so listeners added right after `await` see them, in order.
 *
 * A listener that throws does not stall the protocol: the member finishes its step, the error
 * is logged, and it is rethrown on the next tick (an uncaught exception, as a throwing
 * listener of a Node socket would be).
 */
import { EventEmitter } from 'node:events';
import type { NetTransportMetrics } from '../adapters/net-transport.js';
import type { Generation, NodeId } from '../core/ids.js';
import type {
  CoordinatorCheck, MembershipEvent, SwimConfig, SwimLeader, SwimMemberInfo,
} from '../core/swim/index.js';
import { isLiveState } from '../core/swim/index.js';
import type { Logger } from '../ports/logger.js';
import type { SwimRuntime, SwimRuntimeStatus } from '../runtime/swim/index.js';

/** One membership event of the given kind. */
export type MembershipEventOf<K extends MembershipEvent['kind']> =
  Extract<MembershipEvent, { readonly kind: K }>;

/** The events a `Membership` emits, for `on`, `once` and `events.on(membership, ...)`. */
export type MembershipEventMap =
  { [K in MembershipEvent['kind']]: [event: MembershipEventOf<K>] }
  & { event: [event: MembershipEvent] };

export interface MembershipStatus extends SwimRuntimeStatus {
  /** The address this member advertises (host:port), as other members reach it. */
  readonly address: string;
  /** Whether the member is running, on its way out, or closed. */
  readonly lifecycle: 'running' | 'leaving' | 'closed';
  /** The UDP and TCP counters of the transport. */
  readonly transport: NetTransportMetrics;
}

export interface LeaveOptions {
  /**
   * Longest wait for the `left` news to be sent its retransmit limit before the sockets are
   * closed anyway. Unit: ms. Default: max(1000, 10 × gossipIntervalMs) (LAN: 2 s), far above
   * the few gossip rounds it takes.
   */
  readonly timeoutMs?: number;
}

/** What the membership closes and reads; the real parts come from `joinCluster`. */
export interface MembershipParts {
  readonly runtime: SwimRuntime;
  readonly address: string;
  readonly config: SwimConfig;
  readonly logger: Logger;
  /** Closes the sockets (idempotent). */
  readonly closeTransport: () => void;
  readonly transportMetrics: () => NetTransportMetrics;
}

/** After the leave news is out, the sockets stay open this long so datagrams leave first. */
const LEAVE_LINGER_MS = 20;

export class Membership extends EventEmitter<MembershipEventMap> {
  /** This member's name (its id in the cluster). */
  readonly id: NodeId;
  /** The address this member advertises (host:port), with the port the OS picked if 0. */
  readonly address: string;
  private readonly runtime: SwimRuntime;
  private lifecycle: 'running' | 'leaving' | 'closed' = 'running';
  /** Events held until the owner had a chance to listen (see the module comment). */
  private held: MembershipEvent[] | undefined = [];
  private leaving: Promise<void> | undefined;

  /** @internal Use `joinCluster`. */
  constructor(private readonly parts: MembershipParts) {
    super();
    this.runtime = parts.runtime;
    this.id = parts.runtime.id;
    this.address = parts.address;
    parts.runtime.subscribe((event) => this.deliver(event));
  }

  /**
   * The live members (alive or suspect), this one included, oldest first. With
   * `{ includeGone: true }`, also the members declared dead or gone (kept `deadRetainMs`).
   */
  members(options: { readonly includeGone?: boolean } = {}): SwimMemberInfo[] {
    const all = this.runtime.members();
    return options.includeGone === true ? all : all.filter((m) => isLiveState(m.state));
  }

  /** One member's record in this member's view, in any state. */
  member(id: string): SwimMemberInfo | undefined {
    return this.runtime.member(id as NodeId);
  }

  /**
   * The emergent leader: the oldest live member, with the generation it claimed. Undefined
   * while this side may not act (its split-brain strategy fails), while a new leader's claim
   * is still on its way here (a few gossip rounds), and after `leave()` or `close()`.
   */
  leader(): SwimLeader | undefined {
    return this.runtime.leader();
  }

  /** Whether this member is the leader in its own view. */
  isLeader(): boolean {
    return this.runtime.leader()?.id === this.id;
  }

  /**
   * Whether to obey a message that `from` sent as the leader of `generation` (the generation
   * clock): 'ok' only for the current leader at its current generation; a lower generation is
   * 'stale-generation' (a deposed leader), whoever sends it.
   */
  checkLeader(from: string, generation: Generation): CoordinatorCheck {
    return this.runtime.checkCoordinator(from as NodeId, generation);
  }

  status(): MembershipStatus {
    return {
      ...this.runtime.status(),
      address: this.address,
      lifecycle: this.lifecycle,
      transport: this.parts.transportMetrics(),
    };
  }

  /**
   * Leaves gracefully: announces `left` to a few members at once and by gossip, waits until
   * the news has been sent its retransmit limit (or `timeoutMs`), then closes the sockets.
   * The others see 'left' (not 'dead'), and if this member led, they see 'leader-changed'
   * with the reason 'oldest-left'. Idempotent: later calls return the same promise.
   */
  leave(options: LeaveOptions = {}): Promise<void> {
    if (this.leaving !== undefined) return this.leaving;
    if (this.lifecycle === 'closed') return Promise.resolve();
    this.lifecycle = 'leaving';
    const gossipMs = this.parts.config.gossipIntervalMs;
    const timeoutMs = options.timeoutMs ?? Math.max(1000, 10 * gossipMs);
    // Alone, nobody is there to hear the news: the member would gossip until the timeout.
    const alone = this.members().every((m) => m.id === this.id);
    this.runtime.leave();
    this.leaving = new Promise<void>((resolve) => {
      const deadline = performance.now() + (alone ? 0 : timeoutMs);
      const poll = (): void => {
        if (this.lifecycle === 'closed') return resolve();
        if (!this.runtime.idle && performance.now() < deadline) {
          setTimeout(poll, Math.max(5, Math.min(50, gossipMs / 2)));
          return;
        }
        setTimeout(() => {
          this.shutDown('left');
          resolve();
        }, LEAVE_LINGER_MS);
      };
      poll();
    });
    return this.leaving;
  }

  /**
   * Stops at once, without a goodbye: the others will suspect this member and declare it dead
   * (prefer `leave()`). Idempotent.
   */
  close(): Promise<void> {
    this.shutDown('closed');
    return Promise.resolve();
  }

  /** @internal Emits the held events (called by `joinCluster` once it resolves). */
  releaseHeldEvents(): void {
    setImmediate(() => {
      const held = this.held ?? [];
      for (let i = 0; i < held.length; i++) this.emitSafely(held[i] as MembershipEvent);
      this.held = undefined;
    });
  }

  private deliver(event: MembershipEvent): void {
    if (event.kind === 'join-failed') {
      this.parts.logger.warn({ seeds: event.seeds }, 'no seed admitted this member yet; retrying');
    }
    if (this.held !== undefined) this.held.push(event);
    else this.emitSafely(event);
  }

  private emitSafely(event: MembershipEvent): void {
    try {
      const emit = this.emit.bind(this) as (name: string, event: MembershipEvent) => boolean;
      emit(event.kind, event);
      emit('event', event);
    } catch (error) {
      this.parts.logger.error({ err: String(error), event: event.kind },
        'a membership listener threw');
      process.nextTick(() => {
        throw error;
      });
    }
  }

  private shutDown(how: 'left' | 'closed'): void {
    if (this.lifecycle === 'closed') return;
    this.lifecycle = 'closed';
    this.runtime.stop();
    this.parts.closeTransport();
    this.parts.logger.info({ member: this.id, how }, 'membership closed');
  }
}
