/**
 * The consistent core on one server: a Raft node (RaftRuntime over the write-ahead log) whose
 * replicated state machine is the revisioned key-value store (src/core/kv), with its leases
 * tracked by the leader's LeaseTracker (src/runtime/lease). It turns client requests into log
 * entries or reads, and answers with values that say exactly what happened: applied (with the
 * store's result), failed (definitely not applied), or unknown (maybe).
 *
 * Leases: grants and revokes are writes; keep-alives, time-to-live and the lease list are
 * answered by the leader after a ReadIndex confirmation (docs/leases.md). The tracker learns of
 * role changes from Raft's events, of applied entries from the state machine (with the time
 * each entry reached this member's log, noted as the runtime appends it), and proposes its own
 * bookkeeping through the same log.
 *
 * Transport-agnostic (any Transport<RaftMessage>), so tests can run it on the simulator's network
 * and the server runs it over TCP.
 */
import type { NodeId } from '../../core/ids.js';
import type { Entry } from '../../core/raft/types.js';
import type { Random } from '../../core/random.js';
import {
  encodeValidKvCommand, KvStore, type KvApplyResult, type KvCommand, type KvRangeRequest,
  type KvRangeResult, type KvErrorResult, type KvClientCommand, type KvStoreConfig, type KvEvent,
  type KvKeySelector,
} from '../../core/kv/index.js';
import type { RaftEvent, RaftMessage, RaftStatus, RaftTuning } from '../../core/raft/index.js';
import type { RaftStorage } from '../raft-storage.js';
import { canStoreSnapshots } from '../snapshot/snapshot-raft-storage.js';
import {
  LEASE_DEFAULTS, LeaseTracker, leaseTimingOf, leaseTtlProblem, validateLeaseConfig,
  type LeaseAnswer, type LeaseConfig, type LeaseProposalOutcome,
} from '../lease/index.js';
import type { LeaseTiming } from '../../core/kv/index.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { Storage } from '../../ports/storage.js';
import type { Timer } from '../../ports/timer.js';
import type { Transport } from '../../ports/transport.js';
import {
  RaftRuntime, type ProposalOutcome, type SnapshotEvent,
} from '../raft/raft-runtime.js';
import {
  RAFT_RUNTIME_DEFAULTS, validateRaftRuntimeConfig, type RaftRuntimeConfig,
} from '../raft/runtime-config.js';
import {
  AUTO_COMPACTION_OFF, AutoCompactor, validateAutoCompactionConfig, type AutoCompactionConfig,
} from './auto-compaction.js';
import { kvSnapshotSteps, restoreKvSnapshot } from './kv-snapshots.js';
import { StartupTimeline } from './startup-timeline.js';
import { openWal, WAL_DEFAULTS, type Wal, type WalConfig } from '../wal/index.js';
import { ConfigInvalidError, CoordError } from '../../errors.js';
import { formatConfigProblems } from '../../core/config.js';

export interface ConsistentCoreOptions {
  readonly id: NodeId;
  readonly voters: readonly NodeId[];
  readonly raft: RaftTuning;
  readonly kv: KvStoreConfig;
  readonly wal?: WalConfig;
  /** Default: LEASE_DEFAULTS. Checked against `raft` (ConfigInvalidError lists every rule). */
  readonly lease?: LeaseConfig;
  /**
   * Snapshots and log compaction (`snapshotEntries` is `conclave server --snapshot-count`).
   * Default: RAFT_RUNTIME_DEFAULTS (a snapshot every 10 000 entries).
   */
  readonly raftRuntime?: RaftRuntimeConfig;
  /** History compaction on the leader (etcd's --auto-compaction-*). Default: off. */
  readonly autoCompaction?: AutoCompactionConfig;
  /** TEST-ONLY planted bugs, see {@link CoreMutants}. Default: absent (no mutant). */
  readonly mutants?: CoreMutants;
}

/**
 * TEST-ONLY planted bugs in the server path. Each flag turns on one clearly marked branch that
 * breaks a rule, so the simulator (`conclave sim --scenario core --mutant NAME`) can prove a
 * checker catches it. Production configs leave `mutants` out; nothing outside tests sets one.
 */
export interface CoreMutants {
  /** A linearizable read is answered from this member's state, with no ReadIndex barrier. */
  readonly readsWithoutReadIndex: boolean;
  /** A page of watch events with two or more loses its last one (an off-by-one in paging). */
  readonly watchSkipsEvent: boolean;
  /** The store's idempotency check dropped: a retry is applied again (KvMutants). */
  readonly retryReapplied: boolean;
}

/** No mutant: what options without `mutants` mean. */
export const CORE_NO_MUTANTS: CoreMutants = Object.freeze({
  readsWithoutReadIndex: false, watchSkipsEvent: false, retryReapplied: false,
});

export interface ConsistentCoreComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly transport: Transport<RaftMessage>;
  /** The WAL directory. */
  readonly storage: Storage;
  /**
   * The snapshot directory. Default: `storage` (the server uses `<data-dir>/snap`). Ignored
   * when `wal` is given (it was opened with its own).
   */
  readonly snapshotStorage?: Storage;
  /**
   * The write-ahead log over `storage`, already opened: the server opens it before any
   * listener, so a damaged log is refused before the member is reachable. Opened here (and
   * its repairs logged) when absent.
   */
  readonly wal?: Wal;
  readonly random: Random;
  readonly logger: Logger;
  /**
   * Called after every applied entry (watches pull the new events), and after a snapshot
   * replaced the store (`restored`: the store may differ in any way, not by one entry).
   */
  readonly onApplied?: (revision: number, restored?: boolean) => void;
  /** Raft's role, leader and term changes, with their reasons (logs, metrics). */
  readonly onRaftEvent?: (event: RaftEvent) => void;
  /** How long each WAL sync took. Unit: ms. */
  readonly onWalSync?: (durationMs: number) => void;
  /** Every proposal's outcome (applied, failed, unknown), for metrics. */
  readonly onProposal?: (outcome: 'applied' | 'failed' | 'unknown') => void;
  /** Snapshots taken, saved and installed (logs, metrics). */
  readonly onSnapshot?: (event: SnapshotEvent) => void;
  readonly onFatal?: (error: Error) => void;
}

/** A client's write, before the server stamps it with the leader's time. */
export type KvWrite = DistributiveOmit<KvClientCommand, 'nowMs'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export type WriteOutcome =
  | { readonly kind: 'applied'; readonly result: KvApplyResult }
  | { readonly kind: 'failed'; readonly error: CoordError }
  | { readonly kind: 'unknown'; readonly error: CoordError };

export type ReadOutcome =
  | { readonly kind: 'ok'; readonly result: KvRangeResult | KvErrorResult }
  | { readonly kind: 'failed'; readonly error: CoordError };

/** A keep-alive's or time-to-live's answer: the leader's remaining TTL on its clock. */
export interface LeaseStatus {
  readonly leaseId: number;
  /** The granted TTL. Unit: ms. */
  readonly ttlMs: number;
  /** The leader's deadline minus now. Unit: ms. */
  readonly remainingMs: number;
}

export type LeaseOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'failed'; readonly error: CoordError };

/** One lease in the list. */
export interface LeaseListing {
  readonly leaseId: number;
  readonly ttlMs: number;
  /** The leader's remaining TTL (absent while it is being revoked). Unit: ms. */
  readonly remainingMs?: number;
  /** Keys attached. */
  readonly keyCount: number;
}

/** Arrival notes kept before stale ones are swept (about Raft's pendingProposalsMax). */
const ARRIVALS_MAX = 10_000;

export class ConsistentCore {
  readonly store: KvStore;
  readonly runtime: RaftRuntime<KvApplyResult>;
  readonly leases: LeaseTracker;
  /** Automatic history compaction (runs while this member leads). */
  readonly compactor: AutoCompactor;
  /** What the lease bounds and the TTL minimum depend on. */
  readonly leaseTiming: LeaseTiming;
  /** When each log entry reached this member (monotonic ms), until it is applied. */
  private readonly arrivals = new Map<number, number>();
  /**
   * The canonical command of each entry this member proposed and has not yet applied, keyed
   * by the entry's bytes: the very array Raft keeps in its log and hands back to apply, so the
   * leader applies its own proposals without decoding them again (issue #9). Keyed by the
   * bytes object rather than the index: an entry another leader wrote at that index is other
   * bytes, and is decoded as usual. An entry is dropped when it applies or when its proposal
   * ends any other way, so this holds at most the proposals in flight.
   */
  private readonly proposedCommands = new Map<Uint8Array, KvCommand>();
  private stopped = false;
  /** The start's milestones, logged at info level (startup-timeline.ts). */
  private readonly timeline: StartupTimeline;
  /** True while the constructor runs: its restore is the snapshot found on disk. */
  private opening = true;

  private constructor(private readonly options: ConsistentCoreOptions, private readonly c: ConsistentCoreComponents) {
    const leaseConfig = options.lease ?? LEASE_DEFAULTS;
    const runtimeConfig = options.raftRuntime ?? RAFT_RUNTIME_DEFAULTS;
    const compaction = options.autoCompaction ?? AUTO_COMPACTION_OFF;
    const leaseProblems = [...validateLeaseConfig(leaseConfig, options.raft),
      ...validateRaftRuntimeConfig(runtimeConfig), ...validateAutoCompactionConfig(compaction)];
    if (leaseProblems.length > 0) throw new ConfigInvalidError(formatConfigProblems(leaseProblems));
    this.leaseTiming = leaseTimingOf(leaseConfig, options.raft);
    this.timeline = new StartupTimeline(c.clock, c.logger);
    this.store = new KvStore(options.mutants?.retryReapplied === true
      ? { ...options.kv, mutants: { retryReapplied: true } } : options.kv);
    this.leases = new LeaseTracker(leaseConfig, {
      clock: c.clock, timer: c.timer, leases: this.store,
      propose: (command, done) => this.proposeLeaseCommand(command, done),
      confirmLeadership: (done) => this.runtime.read((outcome) => done(outcome.kind === 'ready')),
    });
    this.compactor = new AutoCompactor(compaction, {
      clock: c.clock, timer: c.timer, revision: () => this.store.revision,
      compactRevision: () => this.store.compactRevision,
      compact: (revision, done) => this.autoCompact(revision, done),
    });
    // Snapshot files are written a piece per turn; a stopped core writes no more of them.
    const yieldTurn = (next: () => void): void => {
      if (!this.stopped) c.timer.setTimer(runtimeConfig.snapshotStepIntervalMs, next);
    };
    c.wal?.setYieldTurn(yieldTurn);
    const opened = c.wal !== undefined ? { wal: c.wal, repairs: [] }
      : openWal(c.storage, options.wal ?? WAL_DEFAULTS, {
        ...(c.snapshotStorage === undefined ? {} : { snapshotStorage: c.snapshotStorage }),
        yieldTurn,
      });
    if ('error' in opened) {
      throw new CoordError('CONCLAVE_STORAGE_CORRUPT', opened.error.message);
    }
    for (const repair of opened.repairs) {
      c.logger.warn({ file: repair.file, offsetBytes: repair.offsetBytes, reason: repair.reason }, `wal repaired: ${repair.action}`);
    }
    this.runtime = new RaftRuntime<KvApplyResult>({ ...options.raft, id: options.id, voters: options.voters }, {
      clock: c.clock,
      timer: c.timer,
      transport: c.transport,
      storage: observedStorage(opened.wal, c.clock, c.onWalSync, this.arrivals),
      random: c.random,
      stateMachine: {
        apply: (entry) => this.apply(entry),
        beginSnapshot: () => kvSnapshotSteps(this.store),
        restore: (data) => this.restore(data),
      },
      onEvent: (event) => {
        this.pollTimeline();
        // Rejections come in floods: the server logs them rate-limited (RejectionLog).
        if (event.kind !== 'message-rejected') c.logger.info({ event }, `raft: ${event.kind}`);
        if (event.kind === 'role-changed' && event.to === 'leader') {
          this.leases.becomeLeader(event.term);
          this.compactor.becomeLeader();
        } else if (event.kind === 'role-changed' && event.from === 'leader') {
          this.leases.becomeFollower();
          this.compactor.stop();
        }
        c.onRaftEvent?.(event);
      },
      onFatal: (error) => this.fatal(error),
      onSnapshot: (event) => {
        c.logger.info({ index: event.index, sizeBytes: event.sizeBytes }, `snapshot ${event.kind}`);
        c.onSnapshot?.(event);
      },
    }, runtimeConfig);
    this.startTimeline(opened.wal);
  }

  /** The constructor restored what the disk held: the replay runs from there. */
  private startTimeline(wal: Wal): void {
    this.opening = false;
    const { snapshot, hardState } = wal.recovered;
    this.timeline.recovered(snapshot?.meta.index ?? 0, hardState.commitIndex);
  }

  private fatal(error: Error): void {
    this.c.logger.error({ error: error.message }, 'raft stopped: storage failure');
    this.c.onFatal?.(error);
  }

  private pollTimeline(): void {
    if (this.timeline.done || this.runtime === undefined) return;
    const status = this.runtime.status();
    this.timeline.poll(status.appliedIndex, status.leaderId !== undefined);
  }

  /** Opens the WAL and starts the node. Throws CoordError CONCLAVE_STORAGE_CORRUPT on a damaged log. */
  static open(options: ConsistentCoreOptions, components: ConsistentCoreComponents): ConsistentCore {
    return new ConsistentCore(options, components);
  }

  get id(): NodeId {
    return this.options.id;
  }

  status(): RaftStatus {
    return this.runtime.status();
  }

  /**
   * Validates, stamps and proposes a write; `done` gets its outcome exactly once. A lease grant
   * shorter than the TTL minimum (from the election timeout and ρ) is refused here, naming it.
   */
  write(write: KvWrite, done: (outcome: WriteOutcome) => void): void {
    if (write.kind === 'lease-grant') {
      const problem = leaseTtlProblem(write.ttlMs, this.leaseTiming);
      if (problem !== undefined) {
        return done({ kind: 'failed', error: new CoordError('CONCLAVE_REQUEST_INVALID', problem) });
      }
    }
    const command = { ...write, nowMs: Math.floor(this.c.clock.wallMs()) } as KvCommand;
    const encoded = encodeValidKvCommand(command, this.store.config);
    if (encoded.kind !== 'ok') {
      const problems = encoded.problems.map((p) => `${p.field}: ${p.rule}`).join('; ');
      return done({ kind: 'failed', error: new CoordError('CONCLAVE_REQUEST_INVALID', problems) });
    }
    this.propose(encoded.bytes, encoded.command, (outcome) => {
      this.c.onProposal?.(outcome.kind);
      switch (outcome.kind) {
        case 'applied':
          return done({ kind: 'applied', result: outcome.result });
        case 'failed':
          return done({ kind: 'failed', error: notLeaderOr(outcome.reason, outcome.leaderHint) });
        case 'unknown':
          return done({ kind: 'unknown', error: new CoordError('CONCLAVE_TIMEOUT', outcome.reason, { outcome: 'unknown' }) });
      }
    });
  }

  /**
   * Reads. `serializable`: this replica's state now (may be stale). `linearizable`: only on the
   * leader, after a read barrier through the log (an empty read-only transaction), so the
   * answer reflects every write acknowledged before the read began.
   */
  read(request: KvRangeRequest, consistency: 'linearizable' | 'serializable',
    done: (outcome: ReadOutcome) => void): void {
    if (consistency === 'serializable') return done({ kind: 'ok', result: this.store.range(request) });
    // MUTANT readsWithoutReadIndex: answered from this member's state, leadership unconfirmed.
    if (this.options.mutants?.readsWithoutReadIndex === true) {
      return done({ kind: 'ok', result: this.store.range(request) });
    }
    // ReadIndex (Raft thesis §6.4): confirmed leadership plus applied up to the read index, no
    // log write; the range is read inside the callback, at exactly that point.
    this.runtime.read((outcome) => {
      if (outcome.kind !== 'ready') {
        return done({ kind: 'failed', error: notLeaderOr(outcome.reason, undefined) });
      }
      done({ kind: 'ok', result: this.store.range(request) });
    });
  }

  /** Watch events from `fromRevision` on (pull; the server pushes them to streams). */
  eventsSince(fromRevision: number, selector: KvKeySelector, limit?: number):
    { kind: 'events'; revision: number; events: readonly KvEvent[]; nextRevision: number; more: boolean } | KvErrorResult {
    const page = this.store.eventsSince(fromRevision, selector, limit);
    // MUTANT watchSkipsEvent: the page's last event is lost, its revision still passed over.
    if (this.options.mutants?.watchSkipsEvent !== true || page.kind !== 'events'
      || page.events.length < 2) return page;
    return { ...page, events: page.events.slice(0, -1) };
  }

  /**
   * A keep-alive (leader only): answered with the remaining TTL once this member confirmed its
   * leadership after the keep-alive arrived (and, the first time after each checkpoint, wrote
   * a renewal mark). Failures: CONCLAVE_LEASE_EXPIRED (no such lease), CONCLAVE_NOT_LEADER,
   * CONCLAVE_UNAVAILABLE (retry).
   */
  keepAlive(leaseId: number, done: (outcome: LeaseOutcome<LeaseStatus>) => void): void {
    this.leases.keepAlive(leaseId, (answer) => done(this.leaseOutcome(answer)));
  }

  /** A lease's TTL, remaining TTL and (when asked) keys, after a leadership confirmation. */
  timeToLive(leaseId: number, withKeys: boolean,
    done: (outcome: LeaseOutcome<LeaseStatus & { keys?: readonly string[] }>) => void): void {
    this.leases.timeToLive(leaseId, (answer) => {
      const outcome = this.leaseOutcome(answer);
      if (outcome.kind !== 'ok' || !withKeys) return done(outcome);
      done({ kind: 'ok', value: { ...outcome.value, keys: this.store.leaseKeys(leaseId) } });
    });
  }

  /** Every lease, after a leadership confirmation (leader only). */
  listLeases(done: (outcome: LeaseOutcome<readonly LeaseListing[]>) => void): void {
    if (this.leases.leaderTerm === undefined) {
      return done({ kind: 'failed', error: this.notLeader() });
    }
    this.runtime.read((outcome) => {
      if (outcome.kind !== 'ready' || this.leases.leaderTerm === undefined) {
        return done({ kind: 'failed', error: this.notLeader() });
      }
      done({ kind: 'ok', value: this.store.leases().map((lease) => {
        const remainingMs = this.leases.remainingMs(lease.id);
        return { leaseId: lease.id, ttlMs: lease.ttlMs,
          keyCount: this.store.leaseKeyCount(lease.id),
          ...(remainingMs === undefined ? {} : { remainingMs: Math.floor(remainingMs) }) };
      }) });
    });
  }

  /** Proposals of this member not yet applied or ended (for tests and diagnostics). */
  get proposedCommandCount(): number {
    return this.proposedCommands.size;
  }

  stop(): void {
    this.stopped = true;
    this.compactor.stop();
    this.leases.stop();
    this.runtime.stop('server stopping');
    this.proposedCommands.clear();
  }

  /**
   * A planned stop: a leader first hands leadership to the most up-to-date follower (so the
   * cluster spends no election timeout), then stops. Resolves with who took over, if anyone.
   */
  shutdown(): Promise<NodeId | undefined> {
    this.compactor.stop();
    this.leases.stop();
    return new Promise((resolve) => this.runtime.shutdown((outcome) => {
      this.stopped = true;
      resolve(outcome.transferredTo);
    }));
  }

  /** Proposes `bytes`, remembering `command` (their decoded form) until the outcome. */
  private propose(bytes: Uint8Array, command: KvCommand,
    done: (outcome: ProposalOutcome<KvApplyResult>) => void): void {
    this.proposedCommands.set(bytes, command);
    this.runtime.propose(bytes, (outcome) => {
      // Applied: apply already took it. Otherwise the entry was refused, overwritten or is in
      // doubt: should it still apply, it is decoded like any other entry.
      this.proposedCommands.delete(bytes);
      done(outcome);
    });
  }

  /**
   * An automatic compaction: a `compact` command as this member's own client, the target
   * revision as its sequence (targets only grow, so each is a new request; a retry of the same
   * one is answered from the idempotency table).
   */
  private autoCompact(revision: number, done: () => void): void {
    this.write({ kind: 'compact', clientId: `auto-compaction/${this.options.id}`,
      sequence: revision, revision }, (outcome) => {
      if (outcome.kind === 'applied' && outcome.result.kind === 'compact') {
        this.c.logger.info({ compactRevision: revision }, 'history compacted (auto)');
      } else {
        this.c.logger.warn({ revision, outcome: outcome.kind }, 'automatic compaction did not apply');
      }
      done();
    });
  }

  /**
   * The leader's snapshot (or the one recovered at start) replaces the store: the lease tracker
   * restarts every lease's shadow deadline from now, and watchers pull from the new state.
   */
  private restore(data: Uint8Array): void {
    const startMs = this.c.clock.monotonicMs();
    restoreKvSnapshot(this.store, data);
    const decodeMs = this.c.clock.monotonicMs() - startMs;
    if (this.opening) this.timeline.snapshotLoaded(data.length, decodeMs);
    this.arrivals.clear();
    this.leases.resync();
    this.c.onApplied?.(this.store.revision, true);
  }

  /** The state machine: the store applies, then the lease tracker learns what changed. */
  private apply(entry: Entry): KvApplyResult {
    const command = this.proposedCommands.get(entry.data);
    let result: KvApplyResult;
    if (command === undefined) {
      result = this.store.applyEntry(entry);
    } else {
      // The canonical command is what decoding these bytes gives (codec.ts): same result.
      this.proposedCommands.delete(entry.data);
      result = this.store.apply(entry.index, command);
    }
    const receivedAtMs = this.arrivals.get(entry.index);
    this.arrivals.delete(entry.index);
    // Entries overwritten or covered by a snapshot are never applied here: drop stale notes.
    if (this.arrivals.size > ARRIVALS_MAX) {
      for (const index of this.arrivals.keys()) {
        if (index < entry.index) this.arrivals.delete(index);
      }
    }
    this.leases.onApplied(result, receivedAtMs);
    this.c.onApplied?.(this.store.revision);
    if (this.timeline.applied(entry.index)) this.pollTimeline();
    return result;
  }

  private proposeLeaseCommand(command: Parameters<typeof encodeValidKvCommand>[0],
    done: (outcome: LeaseProposalOutcome) => void): void {
    const encoded = encodeValidKvCommand(command, this.store.config);
    if (encoded.kind !== 'ok') {
      const reason = encoded.problems.map((p) => `${p.field}: ${p.rule}`).join('; ');
      this.c.logger.error({ command: command.kind, reason },
        'lease tracker built an invalid command');
      return done({ kind: 'failed', reason });
    }
    this.propose(encoded.bytes, encoded.command, (outcome) => {
      if (outcome.kind === 'applied') {
        if (outcome.result.kind === 'error') {
          this.c.logger.error({ command: command.kind, error: outcome.result.error },
            'lease command refused');
        }
        return done({ kind: 'applied', result: outcome.result });
      }
      done({ kind: outcome.kind, reason: outcome.reason });
    });
  }

  private leaseOutcome(answer: LeaseAnswer): LeaseOutcome<LeaseStatus> {
    switch (answer.kind) {
      case 'ok':
        return { kind: 'ok', value: { leaseId: answer.leaseId, ttlMs: answer.ttlMs,
          remainingMs: Math.floor(answer.remainingMs) } };
      case 'not-found':
        return { kind: 'failed', error: new CoordError('CONCLAVE_LEASE_EXPIRED',
          `lease ${answer.leaseId} does not exist: it expired, was revoked or was never granted`) };
      case 'not-leader':
        return { kind: 'failed', error: this.notLeader() };
      case 'unavailable':
        return { kind: 'failed', error: new CoordError('CONCLAVE_UNAVAILABLE', answer.reason) };
      case 'overloaded':
        return { kind: 'failed', error: new CoordError('CONCLAVE_OVERLOADED', answer.reason) };
    }
  }

  private notLeader(): CoordError {
    const status = this.runtime.status();
    return notLeaderOr('not-leader', status.leaderId !== status.id ? status.leaderId : undefined);
  }
}

/**
 * The WAL with each sync timed on the monotonic clock, and each appended entry's arrival time
 * noted in `arrivals` (the lease tracker counts a checkpoint from when it reached this member).
 * Snapshot operations pass through when the WAL has them.
 */
function observedStorage(inner: RaftStorage, clock: Clock,
  observe: ((ms: number) => void) | undefined, arrivals: Map<number, number>): RaftStorage {
  const storage: RaftStorage = {
    get recovered() {
      return inner.recovered;
    },
    append: (entries) => {
      const nowMs = clock.monotonicMs();
      for (const entry of entries) arrivals.set(entry.index, nowMs);
      inner.append(entries);
    },
    saveHardState: (hardState) => inner.saveHardState(hardState),
    lastIndex: () => inner.lastIndex(),
    sync: (done) => {
      const startMs = clock.monotonicMs();
      inner.sync((error) => {
        observe?.(clock.monotonicMs() - startMs);
        done(error);
      });
    },
  };
  if (!canStoreSnapshots(inner)) return storage;
  return Object.assign(storage, {
    installSnapshot: inner.installSnapshot.bind(inner),
    saveSnapshot: inner.saveSnapshot.bind(inner),
  });
}

function notLeaderOr(reason: string, leaderHint: NodeId | undefined): CoordError {
  if (reason === 'not-leader') {
    const error = new CoordError('CONCLAVE_NOT_LEADER',
      leaderHint === undefined ? 'no leader known yet' : `not the leader; the leader is ${leaderHint}`);
    return Object.assign(error, { leaderHint });
  }
  return new CoordError('CONCLAVE_UNAVAILABLE', reason);
}
