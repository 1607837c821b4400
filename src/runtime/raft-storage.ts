/**
 * What the Raft runtime needs from durable storage. The write-ahead log (src/runtime/wal) is the
 * real implementation, over the Storage port, so it runs unchanged on files and in the simulator.
 *
 * Contract:
 * - `append` and `saveHardState` stage writes; nothing is durable until `sync` calls `done`
 *   without an error. One `sync` covers everything staged before it (group commit: one fdatasync
 *   per batch).
 * - `append(entries)`: entries are consecutive; when `entries[0].index` is not past the last
 *   stored index, the stored suffix from that index on is replaced (Raft §5.3 conflict rule).
 * - After a crash, the recovered state is a prefix-consistent view: the hard state and entries of
 *   some completed sync or later, never less.
 */
import type { LogIndex } from '../core/ids.js';
import type { Entry, HardState } from '../core/raft/types.js';

export interface RecoveredRaftState {
  readonly hardState: HardState;
  /** The log, in index order, starting at index 1 (or after a snapshot, later). */
  readonly entries: readonly Entry[];
}

export interface RaftStorage {
  /** The state found at open time. */
  readonly recovered: RecoveredRaftState;
  append(entries: readonly Entry[]): void;
  saveHardState(hardState: HardState): void;
  /** Makes everything staged so far durable, then calls `done`. */
  sync(done: (error?: Error) => void): void;
  /** The last index staged (durable or not); 0 when empty. */
  lastIndex(): LogIndex;
}
