/**
 * RaftStorage in memory, for tests of the runtime and the Raft core that do not need a disk. It
 * keeps the same rules as the WAL (consecutive entries, suffix replacement, no committed entry
 * replaced), keeps snapshots like the WAL (an installed one replaces the log; a saved one drops
 * the entries it covers), and remembers what the last completed sync covered, which is what a
 * crash keeps.
 */
import type { LogIndex } from '../../core/ids.js';
import type { Entry, HardState, Snapshot } from '../../core/raft/types.js';
import type { RecoveredRaftState } from '../raft-storage.js';
import type { SnapshotRaftStorage } from '../snapshot/snapshot-raft-storage.js';
import { checkAppend, checkHardState } from './log-rules.js';
import { INITIAL_HARD_STATE } from './recovery.js';

/** A recovered state, with the snapshot the log starts after, if any. */
export type MemoryRecoveredState = RecoveredRaftState & { readonly snapshot?: Snapshot };

export interface MemoryRaftStorageOptions {
  /** The state to start from, as after a restart. Default: an empty log, term 0. */
  readonly recovered?: MemoryRecoveredState;
  /**
   * Runs a sync's completion. Default: at once, inside `sync`. Pass the simulator's scheduler
   * (`(run) => scheduler.schedule(latencyMs, run)`) to make syncs take time.
   */
  readonly defer?: (run: () => void) => void;
}

export class MemoryRaftStorage implements SnapshotRaftStorage {
  readonly recovered: MemoryRecoveredState;
  /** Entries after `snapshotValue` (after index 0 without one). */
  private log: Entry[];
  private snapshotValue: Snapshot | undefined;
  private hardStateValue: HardState;
  private durable: MemoryRecoveredState;
  private durableSequence = 0;
  private readonly defer: (run: () => void) => void;
  /** Syncs requested so far. */
  syncs = 0;

  constructor(options: MemoryRaftStorageOptions = {}) {
    this.recovered = options.recovered ?? { hardState: INITIAL_HARD_STATE, entries: [] };
    this.log = [...this.recovered.entries];
    this.snapshotValue = this.recovered.snapshot;
    this.hardStateValue = this.recovered.hardState;
    this.durable = this.recovered;
    this.defer = options.defer ?? ((run) => run());
  }

  private get baseIndex(): number {
    return this.snapshotValue?.meta.index ?? 0;
  }

  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const lastKept = checkAppend(entries, this.lastIndex(), this.hardStateValue.commitIndex);
    if (lastKept !== undefined) this.log.length = lastKept - this.baseIndex;
    this.log.push(...entries);
  }

  saveHardState(hardState: HardState): void {
    checkHardState(this.hardStateValue, hardState, this.lastIndex());
    this.hardStateValue = hardState;
  }

  installSnapshot(snapshot: Snapshot, done: (error?: Error) => void): void {
    this.snapshotValue = snapshot;
    this.log = [];
    this.defer(() => done());
  }

  saveSnapshot(snapshot: Snapshot, done: (error?: Error) => void): void {
    if (snapshot.meta.index > this.baseIndex) {
      this.log = this.log.slice(snapshot.meta.index - this.baseIndex);
      this.snapshotValue = snapshot;
    }
    this.defer(() => done());
  }

  sync(done: (error?: Error) => void): void {
    const entries = [...this.log];
    const snapshot = this.snapshotValue;
    const covered: MemoryRecoveredState = snapshot === undefined
      ? { hardState: this.hardStateValue, entries }
      : { hardState: this.hardStateValue, entries, snapshot };
    const sequence = ++this.syncs;
    this.defer(() => {
      // A deferral that reorders completions must not bring back an older state.
      if (sequence > this.durableSequence) {
        this.durable = covered;
        this.durableSequence = sequence;
      }
      done();
    });
  }

  lastIndex(): LogIndex {
    return (this.baseIndex + this.log.length) as LogIndex;
  }

  /** Everything staged after the snapshot (after index 0 without one), durable or not. */
  entries(): readonly Entry[] {
    return this.log;
  }

  /** The newest snapshot kept, if any. */
  snapshot(): Snapshot | undefined {
    return this.snapshotValue;
  }

  hardState(): HardState {
    return this.hardStateValue;
  }

  /** What the last completed sync covered: the state a crash now would leave. */
  durableState(): MemoryRecoveredState {
    return this.durable;
  }
}
