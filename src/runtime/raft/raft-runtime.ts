/**
 * The Ready loop: drives a pure `RaftNode` through the ports, in the order the Ready contract
 * demands — persist (one sync per batch), then send, then apply, then advance. Written once and
 * run unchanged over real adapters (files, TCP, system clock) and in the simulator.
 *
 * Batching: inputs (messages, proposals, timer ticks) only mark the loop dirty; the loop runs on
 * a zero-delay timer, so everything that arrived in one event-loop turn becomes one Ready: one
 * append per follower and one write.
 *
 * The write path (Raft thesis §10.2.1, and group commit). A leader's appends leave before its
 * own write of the same entries is durable; the core counts the leader's copy towards commit
 * only once this runtime reports the sync done (`RaftNode.advance`), so an entry commits on a
 * majority of durable copies, with or without the leader's. A Ready that needs a sync is
 * pipelined (`RaftNode.accept`): its committed entries are applied at once, the next Ready is
 * taken on the next turn while the sync runs (its writes share the storage's next sync), and
 * what promises durability (acknowledgements, votes, any message of a node whose earlier
 * writes are still syncing) leaves only when this and every earlier sync completed, in order.
 * Followers therefore still acknowledge only after their sync, and term and vote are durable
 * before any message that depends on them.
 *
 * Fail-stop: a storage error stops the node for good (a WAL cannot know what reached the disk);
 * the runtime reports it and does nothing more.
 *
 * Snapshots (Raft §7), when the state machine has `snapshot`/`restore` and the storage keeps
 * snapshots: every `snapshotEntries` applied entries the state machine is snapshotted, the
 * snapshot made durable, then the log before it dropped; a snapshot from the leader (in a
 * Ready) is made durable before anything else of its Ready, and restores the state machine
 * before the Ready's committed entries are applied. At start, the recovered snapshot is
 * restored first.
 */
import { AssertionError, assert } from '../../core/assert.js';
import { crc32c } from '../../core/checksum.js';
import { formatConfigProblems } from '../../core/config.js';
import type { LogIndex, NodeId, Term } from '../../core/ids.js';
import type { Random } from '../../core/random.js';
import type {
  MembershipChange, MembershipChangeResult, RaftConfig, RaftEvent, RaftMessage, RaftStatus, Ready,
} from '../../core/raft/index.js';
import { checkRaftDurableState, RaftNode } from '../../core/raft/index.js';
import type { Entry, Snapshot } from '../../core/raft/types.js';
import { CoordError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Timer, TimerHandle } from '../../ports/timer.js';
import type { Transport } from '../../ports/transport.js';
import type { RaftStorage } from '../raft-storage.js';
import {
  canStoreSnapshots, type SnapshotRaftStorage,
} from '../snapshot/snapshot-raft-storage.js';
import {
  RAFT_RUNTIME_DEFAULTS, validateRaftRuntimeConfig, type RaftRuntimeConfig,
} from './runtime-config.js';

/** The replicated state machine: `apply` must be deterministic (same entries, same state). */
export interface StateMachine<R> {
  apply(entry: Entry): R;
  /**
   * The state after the last applied entry, as bytes (Raft §7 snapshots). Optional: without it
   * (or `beginSnapshot`) and `restore`, the log is never compacted.
   */
  snapshot?(): Uint8Array;
  /**
   * A snapshot taken in steps, for states too large to encode in one event-loop turn: captures
   * the state after the last applied entry now (entries applied later must not change what it
   * encodes), then yields its bytes over `step()` calls, each a bounded piece of work, which
   * the runtime makes on separate turns. Used instead of `snapshot` when present.
   */
  beginSnapshot?(): SnapshotSteps;
  /**
   * Replaces the whole state with a snapshot's (`snapshot()` of some replica). May throw an
   * Error for data it cannot use (say, a format from a newer version): the node then stops.
   */
  restore?(data: Uint8Array): void;
}

/** A snapshot being encoded (`StateMachine.beginSnapshot`). */
export interface SnapshotSteps {
  /** Does the next bounded piece of work; returns the snapshot's bytes once they are done. */
  step(): Uint8Array | undefined;
  /** The runtime no longer needs it (stopped, or the state was replaced): drop the capture. */
  cancel(): void;
}

/**
 * Bytes checksummed per event-loop turn while a stepped snapshot is finished (CRC-32C runs at
 * some hundreds of MB/s here: a few milliseconds per turn). Unit: bytes.
 */
const SNAPSHOT_CHECKSUM_BYTES_PER_TURN = 1024 * 1024;

/** How a proposal ended, as far as this node can tell. */
export type ProposalOutcome<R> =
  /** Committed and applied at `index`; `result` is what the state machine returned. */
  | { readonly kind: 'applied'; readonly index: LogIndex; readonly term: Term; readonly result: R }
  /** Definitely not applied: not leader, too large, too many pending, or overwritten. */
  | { readonly kind: 'failed'; readonly reason: string; readonly leaderHint?: NodeId }
  /** This node stopped before it learned the outcome: it may or may not have been applied. */
  | { readonly kind: 'unknown'; readonly reason: string };

/** How a leadership transfer ended, as far as this node can tell. */
export type TransferOutcome =
  /** Another node leads now (learned from its first message): this node is a follower. */
  | { readonly kind: 'transferred'; readonly leaderId: NodeId; readonly term: Term }
  /**
   * No transfer, or it did not finish: not leader, no other voter, an invalid target, an
   * abort (no new leader within electionTimeoutMsMin; this node still leads), superseded by
   * another transfer, or no leader heard of within twice electionTimeoutMsMax.
   */
  | { readonly kind: 'failed'; readonly reason: string; readonly leaderHint?: NodeId };

/**
 * How a linearizable read ended. `ready`: the state machine has applied every write that
 * completed before the read was asked; read it now, inside the callback (later writes may
 * apply after it returns).
 */
export type ReadOutcome =
  | { readonly kind: 'ready'; readonly index: LogIndex }
  | { readonly kind: 'failed'; readonly reason: string };

/** How a membership change ended: as a proposal (`applied` once the config entry commits). */
export type MembershipOutcome = ProposalOutcome<undefined>;

/** What `shutdown` did before stopping. */
export interface ShutdownOutcome {
  /** The node that leads after this one handed over; undefined when there was no handover. */
  readonly transferredTo: NodeId | undefined;
}

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
  /** Observability: a snapshot taken, saved (durable), or installed from the leader. */
  readonly onSnapshot?: (event: SnapshotEvent) => void;
}

/** What happened to a snapshot of this node, for logs, metrics and checkers. */
export interface SnapshotEvent {
  readonly kind: 'taken' | 'saved' | 'installed';
  readonly index: LogIndex;
  /** The state machine's bytes (do not change them). */
  readonly data: Uint8Array;
  /** `data.length`. Unit: bytes. */
  readonly sizeBytes: number;
}

/** A stepped snapshot under way, and the timer of its next step. */
interface SnapshotStepsState {
  readonly steps: SnapshotSteps;
  timer: TimerHandle | undefined;
}

/** A Ready the core accepted (applied) whose writes are not known durable yet. */
interface UnsyncedReady {
  readonly ready: Ready;
  /** Its writes are durable (or it had none that needed a sync). */
  durable: boolean;
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
  /** No Ready is taken meanwhile: the recovery sync, or a snapshot from the leader installing. */
  private blocked = false;
  /** Readies the core accepted, oldest first, whose writes (or earlier ones) are syncing. */
  private readonly unsynced: UnsyncedReady[] = [];
  /** A Ready carrying the leader's snapshot, installed once `unsynced` is empty. */
  private snapshotReady: Ready | undefined;
  private stopped = false;
  /** Highest index handed to the state machine; never decreases. */
  private appliedIndex = 0;
  /** Callers waiting for the transfer under way, and the runtime's own deadline for it. */
  private transferWaiters: ((outcome: TransferOutcome) => void)[] = [];
  private transferTimer: TimerHandle | undefined;
  /** Reads asked of the core, by request id; then reads confirmed, waiting for the apply. */
  private readsAsked = new Map<string, (outcome: ReadOutcome) => void>();
  private readsApplying: { index: number; done: (outcome: ReadOutcome) => void }[] = [];
  private readSequence = 0;
  /** Set when both the storage and the state machine can snapshot. */
  private readonly snapshots: SnapshotRaftStorage | undefined;
  private snapshotInFlight = false;
  /** The stepped snapshot being encoded, and the timer of its next step. */
  private snapshotSteps: SnapshotStepsState | undefined;
  /** `addVoter` calls whose learner is catching up, to promote once it has. */
  private promotions: { node: NodeId; deadlineMs: number; done: (o: MembershipOutcome) => void }[] = [];

  constructor(
    private readonly config: RaftConfig,
    private readonly c: RaftRuntimeComponents<R>,
    private readonly runtimeConfig: RaftRuntimeConfig = RAFT_RUNTIME_DEFAULTS,
  ) {
    const problems = validateRaftRuntimeConfig(runtimeConfig);
    assert(problems.length === 0,
      () => `invalid raft runtime config:\n${formatConfigProblems(problems)}`);
    const { stateMachine, storage } = c;
    const canSnapshot = (stateMachine.snapshot !== undefined ||
      stateMachine.beginSnapshot !== undefined) && stateMachine.restore !== undefined;
    this.snapshots = canSnapshot && canStoreSnapshots(storage) ? storage : undefined;
    // Disk is input too: a state the core cannot run from is refused with the reasons, before
    // anything is restored (for example a term above TERM_MAX written by an older version).
    const stateProblems = checkRaftDurableState(storage.recovered);
    if (stateProblems.length > 0) {
      throw new CoordError('CONCLAVE_STORAGE_CORRUPT',
        `the recovered Raft state is unusable: ${stateProblems.join('; ')}`);
    }
    const recovered = storage.recovered as { readonly snapshot?: Snapshot };
    if (recovered.snapshot !== undefined) {
      assert(stateMachine.restore !== undefined,
        'the storage holds a snapshot but the state machine has no restore()');
      stateMachine.restore(recovered.snapshot.data);
      this.appliedIndex = recovered.snapshot.meta.index;
    }
    this.node = new RaftNode({
      config,
      random: c.random,
      state: storage.recovered,
      nowMs: c.clock.monotonicMs(),
    });
    c.transport.setHandler({
      onMessage: (from, message) => this.onMessage(from, message),
      onPeerReset: (peer) => this.onPeerReset(peer),
    });
    // What recovery read may not be durable yet (written before a crash, never synced): nothing
    // that depends on it (a vote, an ack) leaves this node before one sync covers it.
    this.blocked = true;
    c.storage.sync((error) => {
      this.blocked = false;
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
    this.track(this.node.propose(data, this.c.clock.monotonicMs()), done);
  }

  /** Waits for an accepted entry to apply; reports a refusal at once. */
  private track(result: MembershipChangeResult, done: (outcome: ProposalOutcome<R>) => void): void {
    switch (result.kind) {
      case 'accepted':
        this.pending.set(result.index, { term: result.term, done });
        break;
      case 'rejected':
        if (result.reason === 'not-leader') {
          done(result.leaderHint === undefined
            ? { kind: 'failed', reason: 'not-leader' }
            : { kind: 'failed', reason: 'not-leader', leaderHint: result.leaderHint });
        } else if (result.reason === 'entry-too-large') {
          done({ kind: 'failed', reason: `entry too large: ${result.sizeBytes} > ${result.sizeBytesMax} bytes` });
        } else {
          done({ kind: 'failed', reason: `${result.reason}: ${result.detail}` });
        }
        break;
      case 'dropped':
        done({ kind: 'failed', reason: result.reason });
        break;
    }
    this.schedule();
  }

  /**
   * Proposes one membership change (Raft thesis §4; see `RaftNode.proposeMembershipChange`):
   * `done` is called once, `applied` when the config entry is committed and applied here,
   * `failed` when refused (with the reason) or overwritten, `unknown` if the node stops first.
   */
  changeMembership(change: MembershipChange, done: (outcome: MembershipOutcome) => void): void {
    if (this.stopped) return done({ kind: 'failed', reason: 'node stopped' });
    const result = this.node.proposeMembershipChange(change, this.c.clock.monotonicMs());
    this.track(result, (outcome) => done(outcome.kind === 'applied'
      ? { kind: 'applied', index: outcome.index, term: outcome.term, result: undefined }
      : outcome));
  }

  /**
   * Adds `node` as a voter the safe way (thesis §4.2.1): as a learner first, promoted once it
   * holds every committed entry (within learnerCatchUpMsMax). Start the new node first, with
   * the cluster's voters and itself as a learner in its RaftConfig.
   */
  addVoter(node: NodeId, done: (outcome: MembershipOutcome) => void): void {
    this.changeMembership({ kind: 'add-learner', node }, (outcome) => {
      if (outcome.kind !== 'applied') return done(outcome);
      const deadlineMs = this.c.clock.monotonicMs() + this.runtimeConfig.learnerCatchUpMsMax;
      this.promotions.push({ node, deadlineMs, done });
      this.schedule();
    });
  }

  /** Promotes each caught-up learner of `addVoter`; fails those out of time or leadership. */
  private checkPromotions(): void {
    if (this.promotions.length === 0) return;
    const status = this.node.status();
    const nowMs = this.c.clock.monotonicMs();
    const waiting = this.promotions;
    this.promotions = [];
    for (const promotion of waiting) {
      const match = status.progress.find((p) => p.id === promotion.node)?.matchIndex ?? 0;
      if (status.role !== 'leader') {
        promotion.done({ kind: 'failed', reason: 'not-leader' });
      } else if (match >= status.commitIndex && this.tryPromote(promotion, nowMs)) {
        continue;
      } else if (nowMs >= promotion.deadlineMs) {
        promotion.done({ kind: 'failed', reason: `${promotion.node} did not catch up in time` });
      } else {
        this.promotions.push(promotion);
      }
    }
  }

  /** Proposes the promotion; false when refused for a passing reason (try again later). */
  private tryPromote(promotion: { node: NodeId; done: (o: MembershipOutcome) => void },
    nowMs: number): boolean {
    const result = this.node.proposeMembershipChange({ kind: 'promote', node: promotion.node },
      nowMs);
    const passing = result.kind === 'rejected' && (result.reason === 'change-pending' ||
      result.reason === 'no-commit-in-term' || result.reason === 'learner-behind');
    if (passing) return false;
    this.track(result, (outcome) => promotion.done(outcome.kind === 'applied'
      ? { kind: 'applied', index: outcome.index, term: outcome.term, result: undefined }
      : outcome));
    return true;
  }

  /**
   * A linearizable read without a log write (ReadIndex, Raft thesis §6.4; see
   * `RaftNode.readIndex`): `done` is called exactly once, with `ready` when this node's state
   * machine reflects every write completed before the call (read it then, in the callback), or
   * `failed` (no leader known, leadership lost, too many pending reads, node stopped). Works on
   * followers too: they ask the leader for the index and serve from their own state machine.
   */
  read(done: (outcome: ReadOutcome) => void): void {
    if (this.stopped) return done({ kind: 'failed', reason: 'node stopped' });
    const requestId = `r${++this.readSequence}`;
    const result = this.node.readIndex(requestId, this.c.clock.monotonicMs());
    if (result.kind !== 'pending') return done({ kind: 'failed', reason: result.reason });
    this.readsAsked.set(requestId, done);
    this.schedule();
  }

  /**
   * Hands leadership to `target`, or to the most up-to-date voter when undefined (Raft thesis
   * §3.10; see `RaftNode.transferLeadership`). `done` is called exactly once: `transferred`
   * when this node hears from the new leader, `failed` otherwise. Proposals made meanwhile fail
   * with `leader-stepping-down`. A planned restart costs no election timeout this way.
   */
  transferLeadership(target: NodeId | undefined,
    done: (outcome: TransferOutcome) => void): void {
    if (this.stopped) return done({ kind: 'failed', reason: 'node stopped' });
    const result = this.node.transferLeadership(target, this.c.clock.monotonicMs());
    if (result.kind === 'rejected') {
      if (result.reason === 'not-leader' && result.leaderHint !== undefined) {
        return done({ kind: 'failed', reason: 'not-leader', leaderHint: result.leaderHint });
      }
      return done({ kind: 'failed', reason: result.reason });
    }
    this.settleTransfer({ kind: 'failed', reason: 'superseded by another transfer' });
    this.transferWaiters.push(done);
    // Backstop for a node that stepped down but hears from no leader (the core's own abort
    // covers the case where it still leads).
    this.transferTimer = this.c.timer.setTimer(2 * this.config.electionTimeoutMsMax, () => {
      this.transferTimer = undefined;
      this.settleTransfer({ kind: 'failed', reason: 'no leader heard of in time' });
    });
    this.schedule();
  }

  /**
   * A graceful stop: a leader first hands over (`transferLeadership` to the most up-to-date
   * voter) so that the cluster spends no election timeout on the planned restart, then stops;
   * other nodes stop at once. `done` is called exactly once, after the stop.
   */
  shutdown(done: (outcome: ShutdownOutcome) => void): void {
    if (this.stopped || this.node.status().role !== 'leader') {
      this.stop('node shut down');
      return done({ transferredTo: undefined });
    }
    this.transferLeadership(undefined, (outcome) => {
      this.stop('node shut down');
      done({ transferredTo: outcome.kind === 'transferred' ? outcome.leaderId : undefined });
    });
  }

  /** Stops the node: no more I/O; pending proposals end as unknown. */
  stop(reason = 'node stopped'): void {
    if (this.stopped) return;
    this.stopped = true;
    this.loopScheduled?.cancel();
    this.tickTimer?.cancel();
    this.cancelSnapshotSteps();
    for (const [, p] of this.pending) p.done({ kind: 'unknown', reason });
    this.pending.clear();
    this.settleTransfer({ kind: 'failed', reason });
    const promotions = this.promotions;
    this.promotions = [];
    for (const promotion of promotions) promotion.done({ kind: 'unknown', reason });
    const reads = [...this.readsAsked.values(), ...this.readsApplying.map((r) => r.done)];
    this.readsAsked.clear();
    this.readsApplying = [];
    for (const done of reads) done({ kind: 'failed', reason });
  }

  private settleTransfer(outcome: TransferOutcome): void {
    this.transferTimer?.cancel();
    this.transferTimer = undefined;
    const waiters = this.transferWaiters;
    this.transferWaiters = [];
    for (const done of waiters) done(outcome);
  }

  /** After a Ready: a transfer ends when another leader is known, or when the core gave up. */
  private checkTransfer(ready: Ready): void {
    if (this.transferWaiters.length === 0) return;
    const status = this.node.status();
    if (status.leaderId !== undefined && status.leaderId !== status.id) {
      this.settleTransfer({ kind: 'transferred', leaderId: status.leaderId, term: status.term });
    } else if (lastTransferStage(ready) === 'aborted') {
      this.settleTransfer({ kind: 'failed',
        reason: 'aborted: no new leader within electionTimeoutMsMin' });
    }
  }

  private onMessage(from: NodeId, message: RaftMessage): void {
    if (this.stopped) return;
    this.node.step(from, message, this.c.clock.monotonicMs());
    this.schedule();
  }

  /**
   * The transport's hint that the stream to `peer` broke: the core may bring a pre-vote forward
   * (`RaftConfig.preVoteOnLeaderReset`); the loop re-arms the tick for the new deadline.
   */
  private onPeerReset(peer: NodeId): void {
    if (this.stopped) return;
    this.node.peerReset(peer, this.c.clock.monotonicMs());
    this.schedule();
  }

  /** Runs the loop on the next zero-delay timer, once, however many inputs arrive meanwhile. */
  private schedule(): void {
    if (this.stopped || this.loopScheduled !== undefined) return;
    this.loopScheduled = this.c.timer.setTimer(0, this.runScheduledLoop);
  }

  /** The zero-delay timer's callback, made once (schedule runs after every input). */
  private readonly runScheduledLoop = (): void => {
    this.loopScheduled = undefined;
    this.loop();
  };

  private loop(): void {
    if (this.stopped) return;
    if (!this.blocked && this.node.hasReady()) this.handleReady(this.node.ready());
    this.armTick();
  }

  /**
   * One Ready. Its early messages leave first: a leader's appends go out while its own disk
   * writes the same entries (Raft thesis §10.2.1; the core counts the leader's copy towards
   * commit only once `advance` reports it durable). Then its writes are staged behind earlier
   * ones. A Ready that needs no sync, with nothing syncing before it, is finished at once;
   * otherwise it is pipelined (`acceptReady`).
   */
  private handleReady(ready: Ready): void {
    for (const { to, message } of ready.messagesBeforePersist) this.c.transport.send(to, message);
    for (const event of ready.events) this.c.onEvent?.(event);
    if (ready.snapshot !== undefined) {
      this.blocked = true;
      this.snapshotReady = ready;
      this.maybeInstallSnapshot();
      return;
    }
    this.stage(ready);
    if (!ready.mustSync && this.unsynced.length === 0) {
      this.finishReady(ready);
      this.schedule();
      return;
    }
    this.acceptReady(ready);
  }

  /**
   * Pipelining: the Ready is applied now and the next one may be taken at once (group commit:
   * it accumulates while this one syncs, and shares the storage's next sync). What promises
   * durability waits: `ready.messages` (acks, votes) leave, and the core hears that the writes
   * are durable (`advance`), once this sync and every earlier one completed, in order.
   * Applying does not wait: a committed entry is durable on a majority already (counting this
   * node's copy only if it was durable, see RaftNode.advance).
   */
  private acceptReady(ready: Ready): void {
    const item: UnsyncedReady = { ready, durable: !ready.mustSync };
    this.unsynced.push(item);
    // The sync starts before the applies below; its callback always comes later (RaftStorage
    // contract), after `accept`.
    if (ready.mustSync) {
      this.c.storage.sync((error) => {
        if (this.stopped) return;
        if (error !== undefined) return this.fail(error);
        item.durable = true;
        this.drainDurable();
      });
    }
    for (const entry of ready.committedEntries) this.apply(entry);
    this.node.accept(ready);
    this.afterApply(ready);
    this.schedule();
  }

  /** Finishes the accepted Readies whose writes, and all earlier ones, are durable. */
  private drainDurable(): void {
    for (let item = this.unsynced[0]; item?.durable === true; item = this.unsynced[0]) {
      this.unsynced.shift();
      for (const { to, message } of item.ready.messages) this.c.transport.send(to, message);
      this.node.advance(item.ready);
    }
    this.maybeSnapshot();
    this.maybeInstallSnapshot();
    this.schedule();
  }

  /**
   * Raft §7: an installed snapshot is durable before the entries and hard state after it; it
   * waits until everything staged before it is durable, and no Ready is taken meanwhile.
   */
  private maybeInstallSnapshot(): void {
    const ready = this.snapshotReady;
    if (ready?.snapshot === undefined || this.unsynced.length > 0) return;
    this.snapshotReady = undefined;
    if (this.snapshots === undefined) {
      return this.fail(new Error('the leader sent a snapshot, but this node cannot keep one ' +
        '(its storage or state machine lacks snapshot support)'));
    }
    this.snapshots.installSnapshot(ready.snapshot, (error) => {
      if (this.stopped) return;
      if (error !== undefined) return this.fail(error);
      this.stage(ready);
      this.c.storage.sync((syncError) => {
        if (this.stopped) return;
        if (syncError !== undefined) return this.fail(syncError);
        this.blocked = false;
        this.finishReady(ready);
        this.schedule();
      });
    });
  }

  private stage(ready: Ready): void {
    if (ready.entries.length > 0) this.c.storage.append(ready.entries);
    if (ready.hardState !== undefined) this.c.storage.saveHardState(ready.hardState);
  }

  private fail(error: Error): void {
    if (this.stopped) return;
    this.stop(`storage failed: ${error.message}`);
    this.c.onFatal?.(error);
  }

  /** A Ready whose writes are durable, with nothing accepted before it: all of it, now. */
  private finishReady(ready: Ready): void {
    for (const { to, message } of ready.messages) this.c.transport.send(to, message);
    if (ready.snapshot !== undefined && !this.restore(ready.snapshot)) return;
    for (const entry of ready.committedEntries) this.apply(entry);
    this.node.advance(ready);
    this.afterApply(ready);
    this.maybeSnapshot();
  }

  private afterApply(ready: Ready): void {
    this.settleReads(ready);
    this.checkTransfer(ready);
    this.checkPromotions();
  }

  /** The state machine takes the leader's snapshot (Raft §7). */
  private restore(snapshot: Snapshot): boolean {
    const { index } = snapshot.meta;
    assert(index > this.appliedIndex,
      () => `restore of snapshot ${index} at applied index ${this.appliedIndex}`);
    // A snapshot of our own being encoded is older than this one: it would be dropped anyway.
    this.cancelSnapshotSteps();
    try {
      this.c.stateMachine.restore?.(snapshot.data);
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      this.fail(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
    this.appliedIndex = index;
    this.c.onSnapshot?.({ kind: 'installed', index, data: snapshot.data,
      sizeBytes: snapshot.data.length });
    // Our own entries up to there are now inside someone else's snapshot: whether they made it
    // cannot be told from here.
    for (const [at, pending] of this.pending) {
      if (at > index) continue;
      this.pending.delete(at);
      pending.done({ kind: 'unknown', reason: 'replaced by a snapshot from the leader' });
    }
    return true;
  }

  /**
   * Every snapshotEntries applied entries: snapshot the state machine (at once, or in steps on
   * later turns), make the snapshot durable, then drop the log before it (keeping
   * snapshotCatchUpEntries in memory).
   */
  private maybeSnapshot(): void {
    const every = this.runtimeConfig.snapshotEntries;
    if (this.snapshots === undefined || every === 0 || this.snapshotInFlight) return;
    if (this.appliedIndex - this.node.status().snapshotIndex < every) return;
    const index = this.appliedIndex as LogIndex;
    this.snapshotInFlight = true;
    const { stateMachine } = this.c;
    if (stateMachine.beginSnapshot !== undefined) {
      this.runSnapshotSteps(index, stateMachine.beginSnapshot());
      return;
    }
    const data = stateMachine.snapshot?.();
    assert(data !== undefined, 'maybeSnapshot without a state machine snapshot()');
    this.saveSnapshot(this.node.createSnapshot(index, data));
  }

  /**
   * A stepped snapshot at `index`: one step per turn, then its checksum a slice per turn, so
   * neither stalls the event loop; then it is recorded and saved, unless a snapshot from the
   * leader replaced the state meanwhile (then it is dropped: it is older).
   */
  private runSnapshotSteps(index: LogIndex, steps: SnapshotSteps): void {
    let data: Uint8Array | undefined;
    let checksum = 0;
    let checked = 0;
    const state: SnapshotStepsState = { steps, timer: undefined };
    this.snapshotSteps = state;
    const turn = (): void => {
      state.timer = undefined;
      if (this.stopped || this.snapshotSteps !== state) return;
      if (data === undefined) {
        data = steps.step();
      } else {
        const end = Math.min(data.length, checked + SNAPSHOT_CHECKSUM_BYTES_PER_TURN);
        checksum = crc32c(data, checked, end, checksum);
        checked = end;
      }
      if (data === undefined || checked < data.length) {
        state.timer = this.c.timer.setTimer(this.runtimeConfig.snapshotStepIntervalMs, turn);
        return;
      }
      this.snapshotSteps = undefined;
      if (this.node.status().snapshotIndex >= index) {
        this.snapshotInFlight = false;
        return;
      }
      this.saveSnapshot(this.node.createSnapshot(index, data, checksum));
    };
    state.timer = this.c.timer.setTimer(this.runtimeConfig.snapshotStepIntervalMs, turn);
  }

  private cancelSnapshotSteps(): void {
    const state = this.snapshotSteps;
    if (state === undefined) return;
    this.snapshotSteps = undefined;
    state.timer?.cancel();
    state.steps.cancel();
    this.snapshotInFlight = false;
  }

  private saveSnapshot(snapshot: Snapshot): void {
    const storage = this.snapshots;
    assert(storage !== undefined, 'saveSnapshot without snapshot storage');
    this.c.onSnapshot?.({ kind: 'taken', index: snapshot.meta.index, data: snapshot.data,
      sizeBytes: snapshot.data.length });
    storage.saveSnapshot(snapshot, (error) => {
      this.snapshotInFlight = false;
      if (this.stopped) return;
      if (error !== undefined) return this.fail(error);
      this.c.onSnapshot?.({ kind: 'saved', index: snapshot.meta.index, data: snapshot.data,
        sizeBytes: snapshot.data.length });
      const keep = this.runtimeConfig.snapshotCatchUpEntries;
      // Pipelined Readies apply entries before this node's copy is durable (they are durable
      // on a majority): only durable entries leave the log.
      const stableIndex = this.node.status().stableIndex;
      this.node.compact(Math.max(0, Math.min(snapshot.meta.index - keep, stableIndex)) as LogIndex);
      this.schedule();
    });
  }

  /** Confirmed reads wait for their index to be applied; failed ones end now. */
  private settleReads(ready: Ready): void {
    for (const failure of ready.readsFailed) {
      const done = this.readsAsked.get(failure.requestId);
      this.readsAsked.delete(failure.requestId);
      done?.({ kind: 'failed', reason: failure.reason });
    }
    for (const state of ready.readStates) {
      const done = this.readsAsked.get(state.requestId);
      if (done === undefined) continue;
      this.readsAsked.delete(state.requestId);
      this.readsApplying.push({ index: state.index, done });
    }
    if (this.readsApplying.length === 0) return;
    const due = this.readsApplying.filter((r) => r.index <= this.appliedIndex);
    if (due.length === 0) return;
    this.readsApplying = this.readsApplying.filter((r) => r.index > this.appliedIndex);
    for (const read of due) read.done({ kind: 'ready', index: read.index as LogIndex });
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

  /** Keeps one timer armed at (or before) the node's next deadline. */
  private armTick(): void {
    const deadlineMs = this.node.nextDeadlineMs();
    // A timer armed no later than the deadline serves: a tick before the deadline does nothing
    // (then this re-arms), and a follower's election deadline moves with every message from
    // the leader, a leader's check-quorum deadline with every answer: re-arming on each would
    // churn a timer per message.
    if (this.tickTimer !== undefined && this.tickAtMs <= deadlineMs) return;
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

/** The stage of the last leadership-transfer event in `ready` (a restart emits two). */
function lastTransferStage(ready: Ready): string | undefined {
  let stage: string | undefined;
  for (const event of ready.events) if (event.kind === 'leadership-transfer') stage = event.stage;
  return stage;
}
