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
 * Who is in the cluster at some point of the log: the voters (their majority commits and
 * elects) and the learners (they replicate but do not vote). Disjoint lists.
 */
export interface Membership {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
  /**
   * Where peers reach members, as the change that added each one recorded it (`host:port`),
   * so that every member learns it from the log or a snapshot, not only from its flags.
   * Absent (or without a member) for members bootstrapped from their flags and for entries
   * written before addresses were recorded: those are reached at their `--cluster` address.
   */
  readonly peerAddrs?: readonly PeerAddrRecord[];
  /**
   * Where clients reach members, as each member published it itself once it started (a
   * `member-attributes` change, etcd's publish), so that every member can list it and send
   * clients to it. Absent (or without a member) until that member has published: its
   * `--client-urls` flag, where given, stands in.
   */
  readonly clientUrls?: readonly ClientUrlRecord[];
}

/** One member's published client URL (validated by `clientUrlProblem`). */
export interface ClientUrlRecord {
  readonly id: NodeId;
  /** `http://host:port` or `https://host:port`. */
  readonly url: string;
}

/** One member's recorded peer address (validated by `peerAddrProblem`). */
export interface PeerAddrRecord {
  readonly id: NodeId;
  /** `host:port`, an IPv6 literal in brackets. */
  readonly addr: string;
}

/** What a snapshot stands for: the log up to (index, term), and the membership there. */
export interface SnapshotMeta {
  readonly index: LogIndex;
  readonly term: Term;
  readonly membership: Membership;
}

/**
 * The state machine's state after applying the log up to `meta.index` (Raft §7): it replaces
 * that prefix of the log. `data` is opaque to Raft (the state machine's own encoding).
 */
export interface Snapshot {
  readonly meta: SnapshotMeta;
  readonly data: Uint8Array;
}

/**
 * What a node finds in durable storage when it starts: the input of `new RaftNode`. It has the
 * same shape as the runtime's `RecoveredRaftState`, so the write-ahead log's result is passed
 * as is. `entries` are consecutive from the snapshot's index + 1 (from 1 without a snapshot),
 * and `hardState.commitIndex` does not exceed the last index (see `checkRaftDurableState`).
 */
export interface RaftDurableState {
  readonly hardState: HardState;
  readonly entries: readonly Entry[];
  /** The newest snapshot, when the log was compacted (or a snapshot was installed). */
  readonly snapshot?: Snapshot;
}
