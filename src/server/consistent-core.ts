/**
 * The consistent core on one server: a Raft node (RaftRuntime over the write-ahead log) whose
 * replicated state machine is the revisioned key-value store (src/core/kv). It turns client
 * requests into log entries or reads, and answers with values that say exactly what happened:
 * applied (with the store's result), failed (definitely not applied), or unknown (maybe).
 *
 * Transport-agnostic (any Transport<RaftMessage>), so tests can run it on the simulator's network
 * and the server runs it over TCP.
 */
import type { NodeId } from '../core/ids.js';
import type { Random } from '../core/random.js';
import {
  encodeValidKvCommand, KvStore, type KvApplyResult, type KvCommand, type KvRangeRequest,
  type KvRangeResult, type KvErrorResult, type KvStoreConfig, type KvEvent, type KvKeySelector,
} from '../core/kv/index.js';
import type { RaftEvent, RaftMessage, RaftStatus, RaftTuning } from '../core/raft/index.js';
import type { RaftStorage } from '../runtime/raft-storage.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { Storage } from '../ports/storage.js';
import type { Timer } from '../ports/timer.js';
import type { Transport } from '../ports/transport.js';
import { RaftRuntime } from '../runtime/raft/raft-runtime.js';
import { openWal, WAL_DEFAULTS, type WalConfig } from '../runtime/wal/index.js';
import { CoordError } from '../errors.js';

export interface ConsistentCoreOptions {
  readonly id: NodeId;
  readonly voters: readonly NodeId[];
  readonly raft: RaftTuning;
  readonly kv: KvStoreConfig;
  readonly wal?: WalConfig;
}

export interface ConsistentCoreComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly transport: Transport<RaftMessage>;
  /** The WAL directory. */
  readonly storage: Storage;
  readonly random: Random;
  readonly logger: Logger;
  /** Called after every applied entry (watches pull the new events). */
  readonly onApplied?: (revision: number) => void;
  /** Raft's role, leader and term changes, with their reasons (logs, metrics). */
  readonly onRaftEvent?: (event: RaftEvent) => void;
  /** How long each WAL sync took. Unit: ms. */
  readonly onWalSync?: (durationMs: number) => void;
  readonly onFatal?: (error: Error) => void;
}

/** A client's write, before the server stamps it with the leader's time. */
export type KvWrite = DistributiveOmit<KvCommand, 'nowMs'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export type WriteOutcome =
  | { readonly kind: 'applied'; readonly result: KvApplyResult }
  | { readonly kind: 'failed'; readonly error: CoordError }
  | { readonly kind: 'unknown'; readonly error: CoordError };

export type ReadOutcome =
  | { readonly kind: 'ok'; readonly result: KvRangeResult | KvErrorResult }
  | { readonly kind: 'failed'; readonly error: CoordError };

export class ConsistentCore {
  readonly store: KvStore;
  readonly runtime: RaftRuntime<KvApplyResult>;

  private constructor(private readonly options: ConsistentCoreOptions, private readonly c: ConsistentCoreComponents) {
    this.store = new KvStore(options.kv);
    const opened = openWal(c.storage, options.wal ?? WAL_DEFAULTS);
    if ('error' in opened) {
      throw new CoordError('CONCLAVE_STORAGE_CORRUPT', opened.error.message);
    }
    for (const repair of opened.repairs) {
      c.logger.warn({ file: repair.file, offsetBytes: repair.offsetBytes, reason: repair.reason }, `wal repaired: ${repair.action}`);
    }
    const store = this.store;
    this.runtime = new RaftRuntime<KvApplyResult>({ ...options.raft, id: options.id, voters: options.voters }, {
      clock: c.clock,
      timer: c.timer,
      transport: c.transport,
      storage: timedStorage(opened.wal, c.clock, c.onWalSync),
      random: c.random,
      stateMachine: {
        apply: (entry) => {
          const result = store.applyEntry(entry);
          c.onApplied?.(store.revision);
          return result;
        },
      },
      onEvent: (event) => {
        c.logger.info({ event }, `raft: ${event.kind}`);
        c.onRaftEvent?.(event);
      },
      onFatal: (error) => {
        c.logger.error({ error: error.message }, 'raft stopped: storage failure');
        c.onFatal?.(error);
      },
    });
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

  /** Validates, stamps and proposes a write; `done` gets its outcome exactly once. */
  write(write: KvWrite, done: (outcome: WriteOutcome) => void): void {
    const command = { ...write, nowMs: this.c.clock.wallMs() } as KvCommand;
    const encoded = encodeValidKvCommand(command, this.store.config);
    if (encoded.kind !== 'ok') {
      const problems = encoded.problems.map((p) => `${p.field}: ${p.rule}`).join('; ');
      return done({ kind: 'failed', error: new CoordError('CONCLAVE_REQUEST_INVALID', problems) });
    }
    this.runtime.propose(encoded.bytes, (outcome) => {
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
    clientId: string, sequence: number, done: (outcome: ReadOutcome) => void): void {
    if (consistency === 'serializable') return done({ kind: 'ok', result: this.store.range(request) });
    const barrier: KvWrite = { kind: 'txn', clientId, sequence, compare: [], success: [], failure: [] };
    this.write(barrier, (outcome) => {
      if (outcome.kind !== 'applied') {
        return done({ kind: 'failed', error: outcome.error });
      }
      done({ kind: 'ok', result: this.store.range(request) });
    });
  }

  /** Watch events from `fromRevision` on (pull; the server pushes them to streams). */
  eventsSince(fromRevision: number, selector: KvKeySelector, limit?: number):
    { kind: 'events'; revision: number; events: readonly KvEvent[]; nextRevision: number; more: boolean } | KvErrorResult {
    return this.store.eventsSince(fromRevision, selector, limit);
  }

  stop(): void {
    this.runtime.stop('server stopping');
  }
}

/** The WAL with each sync timed on the monotonic clock. */
function timedStorage(inner: RaftStorage, clock: Clock, observe: ((ms: number) => void) | undefined): RaftStorage {
  if (observe === undefined) return inner;
  return {
    get recovered() {
      return inner.recovered;
    },
    append: (entries) => inner.append(entries),
    saveHardState: (hardState) => inner.saveHardState(hardState),
    lastIndex: () => inner.lastIndex(),
    sync: (done) => {
      const startMs = clock.monotonicMs();
      inner.sync((error) => {
        observe(clock.monotonicMs() - startMs);
        done(error);
      });
    },
  };
}

function notLeaderOr(reason: string, leaderHint: NodeId | undefined): CoordError {
  if (reason === 'not-leader') {
    const error = new CoordError('CONCLAVE_NOT_LEADER',
      leaderHint === undefined ? 'no leader known yet' : `not the leader; the leader is ${leaderHint}`);
    return Object.assign(error, { leaderHint });
  }
  return new CoordError('CONCLAVE_UNAVAILABLE', reason);
}
