/**
 * The SWIM member as a running component: drives a pure `SwimMember` through the ports (Clock,
 * Timer, Transport) and does the runtime's duties that `swim-member.ts` lists, in order, after
 * every input (a join or leave call, a message, a timer):
 *  1. `drain()`: send each message on its channel ('datagram' → `sendDatagram`, 'stream' →
 *     `send`), then publish each event to `onEvent` and to the subscribers;
 *  2. keep ONE timer armed at (or before) `nextDeadlineMs()`; when it fires, `tick(now)`.
 * Inbound messages are untrusted: each goes through `validateSwimMessage` first; an invalid
 * one is counted, logged at debug level, and dropped (it never reaches the member, never
 * throws).
 *
 * Timer policy: an early tick is harmless (the member only does what is due), so a deadline
 * that moves later keeps the armed timer, which fires, ticks, and re-arms at the new deadline;
 * only a deadline that moves earlier re-arms at once. This keeps timer churn at about one timer
 * per protocol event instead of one per message.
 *
 * Runs unchanged over real adapters (UDP datagrams, TCP streams, the system clock) and in the
 * simulator (SimHost gives the same ports).
 */
import { assert } from '../../core/assert.js';
import type { Generation, NodeId } from '../../core/ids.js';
import type { Random } from '../../core/random.js';
import {
  SwimMember, validateSwimMessage, type CoordinatorCheck, type MembershipEvent, type SwimConfig,
  type SwimLeader, type SwimMemberInfo, type SwimMessage, type SwimStatus,
} from '../../core/swim/index.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { Timer, TimerHandle } from '../../ports/timer.js';
import type { Transport } from '../../ports/transport.js';

export interface SwimRuntimeOptions {
  /** This member's id; peers address it by this id (the transport maps ids to addresses). */
  readonly id: NodeId;
  /** The address this member advertises (host:port), gossiped to everyone. */
  readonly address: string;
  readonly config: SwimConfig;
}

export interface SwimRuntimeComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly transport: Transport<SwimMessage>;
  readonly random: Random;
  /** Called with every membership event, in order, after the messages of the same input. */
  readonly onEvent?: (event: MembershipEvent) => void;
  /** Dropped messages and lifecycle steps are logged here (debug level). */
  readonly logger?: Logger;
}

/** A subscriber to membership events; see `SwimRuntime.subscribe`. */
export type SwimEventListener = (event: MembershipEvent) => void;

/** The member's status plus what only the runtime knows. */
export interface SwimRuntimeStatus extends SwimStatus {
  /** Inbound messages that failed `validateSwimMessage` and were dropped. */
  readonly invalidMessagesDropped: number;
  /** The last validation problem seen, for an operator (undefined when none). */
  readonly invalidMessageLast: string | undefined;
  /** Whether `stop()` was called: the runtime ignores every input since. */
  readonly stopped: boolean;
}

export class SwimRuntime {
  readonly id: NodeId;
  private readonly core: SwimMember;
  private readonly listeners = new Set<SwimEventListener>();
  private tickTimer: TimerHandle | undefined;
  /** The deadline the armed timer fires at (local monotonic ms); Infinity when none armed. */
  private tickAtMs = Infinity;
  private stopped = false;
  private invalidDropped = 0;
  private invalidLast: string | undefined;

  constructor(options: SwimRuntimeOptions, private readonly c: SwimRuntimeComponents) {
    this.id = options.id;
    assert(c.transport.localId === options.id,
      () => `transport is bound to ${c.transport.localId}, member is ${options.id}`);
    this.core = new SwimMember({
      id: options.id, address: options.address, config: options.config, random: c.random,
    });
    c.transport.setHandler({ onMessage: (from, message) => this.onMessage(from, message) });
  }

  /**
   * Joins through `seeds` (tried one at a time until one admits this member); with no seed
   * other than itself, bootstraps a new cluster as its first and oldest member.
   */
  join(seeds: readonly NodeId[]): void {
    if (this.stopped) return;
    this.core.join(seeds, this.c.clock.monotonicMs());
    this.flush();
  }

  /**
   * Leaves gracefully: the `left` news goes out at once and by gossip. The runtime keeps
   * ticking until the news has been sent its retransmit limit (`idle` turns true); then the
   * owner may `stop()` and close the transport.
   */
  leave(): void {
    if (this.stopped) return;
    this.core.leave(this.c.clock.monotonicMs());
    this.flush();
  }

  /** Stops for good: no more sends, ticks or events; the transport is left to its owner. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.tickTimer?.cancel();
    this.tickTimer = undefined;
    this.tickAtMs = Infinity;
    this.c.logger?.debug({ member: this.id }, 'swim runtime stopped');
  }

  /** True once the member has nothing scheduled (after a leave: the news has gone out). */
  get idle(): boolean {
    return this.stopped || this.core.nextDeadlineMs() === undefined;
  }

  /** Every member this member knows of (itself included), oldest first. */
  members(): SwimMemberInfo[] {
    return this.core.members();
  }

  member(id: NodeId): SwimMemberInfo | undefined {
    return this.core.member(id);
  }

  /** The emergent leader in this member's view (see `SwimMember.leader`). */
  leader(): SwimLeader | undefined {
    return this.core.leader();
  }

  /** Whether to obey a message `from` sent as coordinator of `generation` (generation clock). */
  checkCoordinator(from: NodeId, generation: Generation): CoordinatorCheck {
    return this.core.checkCoordinator(from, generation);
  }

  status(): SwimRuntimeStatus {
    return {
      ...this.core.status(),
      invalidMessagesDropped: this.invalidDropped,
      invalidMessageLast: this.invalidLast,
      stopped: this.stopped,
    };
  }

  /**
   * Calls `listener` with every membership event from now on; returns the unsubscribe
   * function. Listeners run on the member's event loop: they must not block.
   */
  subscribe(listener: SwimEventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private onMessage(from: NodeId, raw: unknown): void {
    if (this.stopped) return;
    // Untrusted input: whatever a peer (or a bug in a codec) sent, it is checked and copied.
    const checked = validateSwimMessage(raw);
    if (!checked.ok) {
      this.invalidDropped++;
      this.invalidLast = checked.problem;
      this.c.logger?.debug({ member: this.id, from, problem: checked.problem },
        'invalid swim message dropped');
      return;
    }
    this.core.step(from, checked.message, this.c.clock.monotonicMs());
    this.flush();
  }

  private onTimer(): void {
    this.tickTimer = undefined;
    this.tickAtMs = Infinity;
    if (this.stopped) return;
    this.core.tick(this.c.clock.monotonicMs());
    this.flush();
  }

  /** Duties 1 and 2 of the module comment. */
  private flush(): void {
    if (this.core.hasReady()) {
      const { messages, events } = this.core.drain();
      const transport = this.c.transport;
      for (const out of messages) {
        if (out.channel === 'stream') transport.send(out.to, out.message);
        else transport.sendDatagram(out.to, out.message);
      }
      for (const event of events) this.publish(event);
    }
    this.arm();
  }

  private publish(event: MembershipEvent): void {
    this.c.onEvent?.(event);
    for (const listener of this.listeners) listener(event);
  }

  private arm(): void {
    if (this.stopped) return;
    const deadlineMs = this.core.nextDeadlineMs();
    if (deadlineMs === undefined) {
      this.tickTimer?.cancel();
      this.tickTimer = undefined;
      this.tickAtMs = Infinity;
      return;
    }
    // An armed timer at or before the deadline will tick and re-arm: keep it.
    if (this.tickTimer !== undefined && this.tickAtMs <= deadlineMs) return;
    this.tickTimer?.cancel();
    this.tickAtMs = deadlineMs;
    const delayMs = Math.max(0, deadlineMs - this.c.clock.monotonicMs());
    this.tickTimer = this.c.timer.setTimer(delayMs, () => this.onTimer());
  }
}
