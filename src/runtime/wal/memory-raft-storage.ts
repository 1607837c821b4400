/**
 * RaftStorage in memory, for tests of the runtime and the Raft core that do not need a disk. It
 * keeps the same rules as the WAL (consecutive entries, suffix replacement, no committed entry
 * replaced) and remembers what the last completed sync covered, which is what a crash keeps.
 */
import type { LogIndex } from '../../core/ids.js';
import type { Entry, HardState } from '../../core/raft/types.js';
import type { RaftStorage, RecoveredRaftState } from '../raft-storage.js';
import { checkAppend, checkHardState } from './log-rules.js';
import { INITIAL_HARD_STATE } from './recovery.js';

export interface MemoryRaftStorageOptions {
  /** The state to start from, as after a restart. Default: an empty log, term 0. */
  readonly recovered?: RecoveredRaftState;
  /**
   * Runs a sync's completion. Default: at once, inside `sync`. Pass the simulator's scheduler
   * (`(run) => scheduler.schedule(latencyMs, run)`) to make syncs take time.
   */
  readonly defer?: (run: () => void) => void;
}

export class MemoryRaftStorage implements RaftStorage {
  readonly recovered: RecoveredRaftState;
  private log: Entry[];
  private hardStateValue: HardState;
  private durable: RecoveredRaftState;
  private durableSequence = 0;
  private readonly defer: (run: () => void) => void;
  /** Syncs requested so far. */
  syncs = 0;

  constructor(options: MemoryRaftStorageOptions = {}) {
    this.recovered = options.recovered ?? { hardState: INITIAL_HARD_STATE, entries: [] };
    this.log = [...this.recovered.entries];
    this.hardStateValue = this.recovered.hardState;
    this.durable = this.recovered;
    this.defer = options.defer ?? ((run) => run());
  }

  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const lastKept = checkAppend(entries, this.log.length, this.hardStateValue.commitIndex);
    if (lastKept !== undefined) this.log.length = lastKept;
    this.log.push(...entries);
  }

  saveHardState(hardState: HardState): void {
    checkHardState(this.hardStateValue, hardState, this.log.length);
    this.hardStateValue = hardState;
  }

  sync(done: (error?: Error) => void): void {
    const covered: RecoveredRaftState = { hardState: this.hardStateValue, entries: [...this.log] };
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
    return this.log.length as LogIndex;
  }

  /** Everything staged, durable or not. */
  entries(): readonly Entry[] {
    return this.log;
  }

  hardState(): HardState {
    return this.hardStateValue;
  }

  /** What the last completed sync covered: the state a crash now would leave. */
  durableState(): RecoveredRaftState {
    return this.durable;
  }
}
