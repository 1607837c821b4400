/**
 * The Ready loop: drives a pure `RaftNode` through the ports, in the order the Ready contract
 * demands — persist (one sync per batch), then send, then apply, then advance. Written once and
 * run unchanged over real adapters (files, TCP, system clock) and in the simulator.
 *
 * Batching: inputs (messages, proposals, timer ticks) only mark the loop dirty; the loop runs on
 * a zero-delay timer, so everything that arrived in one event-loop turn becomes one Ready: one
 * append per follower and one fsync. While a sync is in flight new inputs accumulate into the
 * next Ready (group commit without extra latency).
 *
 * Fail-stop: a storage error stops the node for good (a WAL cannot know what reached the disk);
 * the runtime reports it and does nothing more.
 */
import { assert } from '../../core/assert.js';
import type { LogIndex, NodeId, Term } from '../../core/ids.js';
import type { Random } from '../../core/random.js';
import type { RaftConfig, RaftEvent, RaftMessage, RaftStatus, Ready } from '../../core/raft/index.js';
import { RaftNode } from '../../core/raft/index.js';
import type { Entry } from '../../core/raft/types.js';
import type { Clock } from '../../ports/clock.js';
import type { Timer, TimerHandle } from '../../ports/timer.js';
import type { Transport } from '../../ports/transport.js';
import type { RaftStorage } from '../raft-storage.js';

/** The replicated state machine: `apply` must be deterministic (same entries, same state). */
export interface StateMachine<R> {
  apply(entry: Entry): R;
}

/** How a proposal ended, as far as this node can tell. */
export type ProposalOutcome<R> =
  /** Committed and applied at `index`; `result` is what the state machine returned. */
  | { readonly kind: 'applied'; readonly index: LogIndex; readonly term: Term; readonly result: R }
  /** Definitely not applied: not leader, too large, too many pending, or overwritten. */
  | { readonly kind: 'failed'; readonly reason: string; readonly leaderHint?: NodeId }
  /** This node stopped before it learned the outcome: it may or may not have been applied. */
  | { readonly kind: 'unknown'; readonly reason: string };

export interface RaftRuntimeComponents<R> {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly transport: Transport<RaftMessage>;
  readonly storage: RaftStorage;
  readonly stateMachine: StateMachine<R>;
  readonly random: Random;
  /** Observability: role, leader and term changes with their reasons. */
  readonly onEvent?: (event: RaftEvent) => void;
  /** Called once if the node stops on a storage failure. */
  readonly onFatal?: (error: Error) => void;
}

interface PendingProposal<R> {
  readonly term: Term;
  readonly done: (outcome: ProposalOutcome<R>) => void;
}

export class RaftRuntime<R> {
  readonly node: RaftNode;
  private readonly pending = new Map<number, PendingProposal<R>>();
  private loopScheduled: TimerHandle | undefined;
  private tickTimer: TimerHandle | undefined;
  private tickAtMs = Infinity;
  private syncing = false;
  private stopped = false;
  /** Highest index handed to the state machine; never decreases. */
  private appliedIndex = 0;

  constructor(config: RaftConfig, private readonly c: RaftRuntimeComponents<R>) {
    this.node = new RaftNode({
      config,
      random: c.random,
      state: c.storage.recovered,
      nowMs: c.clock.monotonicMs(),
    });
    c.transport.setHandler({
      onMessage: (from, message) => this.onMessage(from, message),
    });
    // What recovery read may not be durable yet (written before a crash, never synced): nothing
    // that depends on it (a vote, an ack) leaves this node before one sync covers it.
    this.syncing = true;
    c.storage.sync((error) => {
      this.syncing = false;
      if (error !== undefined) return this.fail(error);
      this.schedule();
    });
  }

  status(): RaftStatus {
    return this.node.status();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Proposes `data`; `done` is called exactly once with the outcome. */
  propose(data: Uint8Array, done: (outcome: ProposalOutcome<R>) => void): void {
    if (this.stopped) return done({ kind: 'failed', reason: 'node stopped' });
    const result = this.node.propose(data, this.c.clock.monotonicMs());
    switch (result.kind) {
      case 'accepted':
        this.pending.set(result.index, { term: result.term, done });
        break;
      case 'rejected':
        if (result.reason === 'not-leader') {
          done(result.leaderHint === undefined
            ? { kind: 'failed', reason: 'not-leader' }
            : { kind: 'failed', reason: 'not-leader', leaderHint: result.leaderHint });
        } else {
          done({ kind: 'failed', reason: `entry too large: ${result.sizeBytes} > ${result.sizeBytesMax} bytes` });
        }
        break;
      case 'dropped':
        done({ kind: 'failed', reason: result.reason });
        break;
    }
    this.schedule();
  }

  /** Stops the node: no more I/O; pending proposals end as unknown. */
  stop(reason = 'node stopped'): void {
    if (this.stopped) return;
    this.stopped = true;
    this.loopScheduled?.cancel();
    this.tickTimer?.cancel();
    for (const [, p] of this.pending) p.done({ kind: 'unknown', reason });
    this.pending.clear();
  }

  private onMessage(from: NodeId, message: RaftMessage): void {
    if (this.stopped) return;
    this.node.step(from, message, this.c.clock.monotonicMs());
    this.schedule();
  }

  /** Runs the loop on the next zero-delay timer, once, however many inputs arrive meanwhile. */
  private schedule(): void {
    if (this.stopped || this.loopScheduled !== undefined) return;
    this.loopScheduled = this.c.timer.setTimer(0, () => {
      this.loopScheduled = undefined;
      this.loop();
    });
  }

  private loop(): void {
    if (this.stopped) return;
    if (!this.syncing && this.node.hasReady()) this.handleReady(this.node.ready());
    this.armTick();
  }

  private handleReady(ready: Ready): void {
    for (const { to, message } of ready.messagesBeforePersist) this.c.transport.send(to, message);
    const storage = this.c.storage;
    if (ready.entries.length > 0) storage.append(ready.entries);
    if (ready.hardState !== undefined) storage.saveHardState(ready.hardState);
    for (const event of ready.events) this.c.onEvent?.(event);
    if (!ready.mustSync) {
      this.finishReady(ready);
      this.schedule();
      return;
    }
    this.syncing = true;
    storage.sync((error) => {
      this.syncing = false;
      if (this.stopped) return;
      if (error !== undefined) return this.fail(error);
      this.finishReady(ready);
      this.schedule();
    });
  }

  private fail(error: Error): void {
    if (this.stopped) return;
    this.stop(`storage failed: ${error.message}`);
    this.c.onFatal?.(error);
  }

  private finishReady(ready: Ready): void {
    for (const { to, message } of ready.messages) this.c.transport.send(to, message);
    for (const entry of ready.committedEntries) this.apply(entry);
    this.node.advance(ready);
  }

  private apply(entry: Entry): void {
    assert(entry.index === this.appliedIndex + 1,
      () => `apply out of order: entry ${entry.index} after ${this.appliedIndex}`);
    this.appliedIndex = entry.index;
    const result = entry.kind === 'normal' ? this.c.stateMachine.apply(entry) : undefined;
    const pending = this.pending.get(entry.index);
    if (pending === undefined) return;
    this.pending.delete(entry.index);
    if (pending.term === entry.term) {
      pending.done({ kind: 'applied', index: entry.index, term: entry.term, result: result as R });
    } else {
      // Raft §5.3: another leader's entry took this index, so the proposal was never committed.
      pending.done({ kind: 'failed', reason: 'overwritten by a new leader' });
    }
  }

  /** Keeps one timer armed at the node's next deadline. */
  private armTick(): void {
    const deadlineMs = this.node.nextDeadlineMs();
    if (this.tickTimer !== undefined && deadlineMs === this.tickAtMs) return;
    this.tickTimer?.cancel();
    this.tickAtMs = deadlineMs;
    if (!Number.isFinite(deadlineMs)) return;
    const delayMs = Math.max(0, deadlineMs - this.c.clock.monotonicMs());
    this.tickTimer = this.c.timer.setTimer(delayMs, () => {
      this.tickTimer = undefined;
      this.tickAtMs = Infinity;
      if (this.stopped) return;
      this.node.tick(this.c.clock.monotonicMs());
      this.loop();
    });
  }
}
