/**
 * The Raft log's shared shapes, used by the core, the runtime and the write-ahead log.
 */
import type { LogIndex, NodeId, Term } from '../ids.js';

/** What an entry carries. `noop` opens each term (Raft §8); `config` changes membership. */
export type EntryKind = 'normal' | 'noop' | 'config';

export interface Entry {
  readonly index: LogIndex;
  readonly term: Term;
  readonly kind: EntryKind;
  /** Opaque command bytes (empty for `noop`). The state machine decodes them. */
  readonly data: Uint8Array;
}

/**
 * What must be on disk before any message that depends on it is sent (Raft Figure 2:
 * currentTerm and votedFor are persistent state; commitIndex is stored to speed up recovery).
 */
export interface HardState {
  readonly term: Term;
  /** The candidate this node voted for in `term`, if any. */
  readonly vote: NodeId | undefined;
  readonly commitIndex: LogIndex;
}

/**
 * What a node finds in durable storage when it starts: the input of `new RaftNode`. It has the
 * same shape as the runtime's `RecoveredRaftState`, so the write-ahead log's result is passed
 * as is. `entries` are consecutive from index 1 (a later change adds a snapshot base), and
 * `hardState.commitIndex` does not exceed the last entry (see `checkRaftDurableState`).
 */
export interface RaftDurableState {
  readonly hardState: HardState;
  readonly entries: readonly Entry[];
}
