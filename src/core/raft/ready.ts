/**
 * What comes out of a RaftNode: the `Ready` batch (persist, send, apply, advance), the events for
 * observers, the outcome of a proposal, and the status snapshot.
 */
import type { LogIndex, NodeId, Term } from '../ids.js';
import type { RaftEnvelope, RaftMessageKind } from './messages.js';
import type { ProgressState } from './progress.js';
import type { Entry, HardState, Membership, Snapshot } from './types.js';

export type RaftRole = 'follower' | 'pre-candidate' | 'candidate' | 'leader';

/** Why a node changed role; shown in events, logs and the dashboard. */
export type RoleChangeReason =
  /** No word from a leader within the randomized election timeout: (pre-)campaign. */
  | 'election-timeout'
  /**
   * The stream to the leader broke (the transport's reset hint) and no message of the leader
   * came since: pre-campaign early (`preVoteOnLeaderReset`).
   */
  | 'leader-link-reset'
  /** A majority would vote for this pre-candidate: it starts the real election. */
  | 'pre-vote-won'
  /** A majority refused the pre-vote: back to follower, term unchanged. */
  | 'pre-vote-lost'
  /** A majority voted for this candidate. */
  | 'election-won'
  /** A majority refused the vote: back to follower in the same term. */
  | 'election-lost'
  /** A message carried a higher term (Raft §5.1): step down to follower. */
  | 'higher-term-seen'
  /** A (pre-)candidate heard from the leader of its own term. */
  | 'leader-discovered'
  /** A leader did not hear from a majority within electionTimeoutMsMin (check-quorum). */
  | 'check-quorum-lost'
  /** The leader sent `timeout-now`: campaign at once, without pre-vote (thesis §3.10). */
  | 'leadership-transfer'
  /** This leader's removal from the voters was committed: it steps down (thesis §4.2.2). */
  | 'removed-from-cluster';

export type TermChangeReason = 'election-started' | 'higher-term-seen';

/**
 * Why a received message was dropped instead of acted on: it contradicts what this node knows,
 * or no correct member could have sent it. A closed set, documented in docs/raft.md; the
 * server counts each in `conclave_peer_messages_rejected_total{reason}`.
 */
export type RejectionReason =
  /** The sender is not a member of any configuration this node holds, nor a known peer. */
  | 'unknown-sender'
  /** The message claims to come from this node itself. */
  | 'from-self'
  /** The term is above TERM_MAX: adopting it could exhaust the terms (messages.ts). */
  | 'term-out-of-range'
  /** A leader's message (append, heartbeat, snapshot, timeout-now) in a term another leads. */
  | 'second-leader'
  /** An append or snapshot that contradicts an entry at or below this node's commit index. */
  | 'below-commit'
  /**
   * An append or snapshot that contradicts entries this node holds from the leader of the
   * current term (the leader never rewrites its own log, Raft §5.3 Leader Append-Only).
   */
  | 'contradicts-leader-log'
  /** A heartbeat whose commit index is past this node's last entry (leaders send our match). */
  | 'commit-beyond-log'
  /** A granted (pre-)vote for a term this node never asked for. */
  | 'unexpected-grant'
  /** An answer about entries, bytes or heartbeat rounds this leader never sent. */
  | 'ack-beyond-sent'
  /** A snapshot whose totalBytes exceeds snapshotBytesMax. */
  | 'snapshot-too-large'
  /** A snapshot that would take more than snapshotChunksMax chunks to assemble. */
  | 'snapshot-too-many-chunks';

/** Every {@link RejectionReason}, in a fixed order (metrics list them all, at 0 at first). */
export const REJECTION_REASONS: readonly RejectionReason[] = Object.freeze([
  'unknown-sender', 'from-self', 'term-out-of-range', 'second-leader', 'below-commit',
  'contradicts-leader-log', 'commit-beyond-log', 'unexpected-grant', 'ack-beyond-sent',
  'snapshot-too-large', 'snapshot-too-many-chunks',
]);

export type RaftEvent =
  | {
    readonly kind: 'role-changed';
    readonly term: Term;
    readonly from: RaftRole;
    readonly to: RaftRole;
    readonly reason: RoleChangeReason;
  }
  | {
    readonly kind: 'leader-changed';
    readonly term: Term;
    readonly leaderId: NodeId | undefined;
    readonly previousLeaderId: NodeId | undefined;
  }
  | {
    readonly kind: 'term-changed';
    readonly from: Term;
    readonly to: Term;
    readonly reason: TermChangeReason;
  }
  | {
    /**
     * A leadership transfer of this leader: `started` (proposals are refused from now on),
     * `timeout-now-sent` (the target's log matched; it was told to campaign), or `aborted`
     * (no new leader within electionTimeoutMsMin, or replaced by a transfer to another node:
     * this node leads on and accepts proposals again). Success shows as `leader-changed`.
     */
    readonly kind: 'leadership-transfer';
    readonly term: Term;
    readonly target: NodeId;
    readonly stage: 'started' | 'timeout-now-sent' | 'aborted';
  }
  | {
    /**
     * Received messages dropped for `reason` (see {@link RejectionReason}): `count` of them,
     * the first from `from`, of kind `messageKind` at `term`. One event per message, except
     * that past REJECTION_EVENTS_PER_READY_MAX in one Ready they are summed per reason.
     */
    readonly kind: 'message-rejected';
    readonly reason: RejectionReason;
    readonly from: NodeId;
    readonly messageKind: RaftMessageKind;
    readonly term: Term;
    readonly count: number;
  };

/** Volatile state worth showing; in `Ready.softState` only when it changed. */
export interface SoftState {
  readonly role: RaftRole;
  readonly term: Term;
  readonly leaderId: NodeId | undefined;
}

/**
 * One batch of work for the runtime. Handle a Ready in this order, then call `advance(ready)`:
 *
 * 1. Send `messagesBeforePersist` at once: they do not depend on this Ready's writes. They are
 *    a leader's appends, heartbeats, snapshot chunks and timeout-now, which leave while the
 *    leader's own disk write runs (Raft thesis §10.2.1; empty when this Ready changes the term
 *    or vote). Under the test-only mutant `ackBeforeSync` they also hold a follower's acks:
 *    the planted bug, acknowledging before the data is durable.
 * 2. Persist: `hardState` (when present) and `entries` (append; when `entries[0].index` is not
 *    past the stored last index, first drop the stored suffix from that index on, Raft §5.3).
 *    Wait until it is durable (one sync) when `mustSync`; when `mustSync` is false only the
 *    commit index changed, which may be written without waiting.
 * 3. Send `messages`, only now: votes, acks and term changes depend on step 2.
 * 4. Apply `committedEntries` to the state machine, in order. Each committed entry is reported
 *    in exactly one Ready, in index order; they may include entries of this Ready's `entries`
 *    (committed means durable on a majority, so a pipelining runtime, see below, applies them
 *    before this node's own copy is durable).
 * 5. Call `advance(ready)`: this reports step 2 done. A leader counts its own copy of the
 *    entries towards commit only from here, so an entry commits on a majority of durable
 *    copies with or without the leader's. Until then `hasReady()` is false and `ready()` must
 *    not be called; `step`, `tick` and `propose` may be called (their output, follower acks
 *    included, goes into the next Ready).
 *
 * Pipelining (optional): after step 1, staging step 2's writes and step 4, call
 * `accept(ready)` instead of waiting; the next Ready may then be taken while the write syncs.
 * Hold `ready.messages` until this write and every earlier one are durable, then send them and
 * call `advance(ready)`, in acceptance order. A Ready with a `snapshot` is not accepted.
 *
 * `events` and `softState` are for observers; act on them in any order.
 */
export interface Ready {
  readonly softState: SoftState | undefined;
  /** Term, vote and commit index to store, present when they changed since the last Ready. */
  readonly hardState: HardState | undefined;
  /**
   * A snapshot received from the leader (InstallSnapshot, Raft §7), to persist before
   * `entries` and `hardState`: it replaces the whole stored log (which now starts after
   * `snapshot.meta.index`). In step 4, restore the state machine from it before applying
   * `committedEntries` (which then start after it). Undefined almost always.
   */
  readonly snapshot: Snapshot | undefined;
  /** New log entries to store, replacing any stored entries from `entries[0].index` on. */
  readonly entries: readonly Entry[];
  /** Whether step 2 must be durable (synced) before step 3: a snapshot, entries, term, vote. */
  readonly mustSync: boolean;
  /**
   * To send before (or while) persisting: a leader's appends, heartbeats, snapshot chunks and
   * timeout-now, when this Ready does not change the term or vote (Raft thesis §10.2.1).
   * TEST-ONLY: a follower's acks too under the mutant `ackBeforeSync`.
   */
  readonly messagesBeforePersist: readonly RaftEnvelope[];
  /** To send after step 2 completed. */
  readonly messages: readonly RaftEnvelope[];
  /** Committed entries to apply, in index order, each exactly once over all Readies. */
  readonly committedEntries: readonly Entry[];
  /**
   * Reads (`readIndex`) whose index is now known: serve each from the state machine once it
   * has applied `index` (at once when it already has, after step 4).
   */
  readonly readStates: readonly ReadState[];
  /** Reads that will never be confirmed here (leadership lost, leader changed, refused). */
  readonly readsFailed: readonly ReadFailure[];
  readonly events: readonly RaftEvent[];
}

/**
 * A confirmed linearizable read (thesis §6.4): the state machine, once it has applied `index`,
 * reflects every write that completed before the read was requested.
 */
export interface ReadState {
  readonly requestId: string;
  readonly index: LogIndex;
}

export interface ReadFailure {
  readonly requestId: string;
  /**
   * `leadership-lost`: this node stopped leading before the read was confirmed.
   * `leader-changed`: the read was forwarded to a leader this node no longer follows.
   * `refused`: the leader it was forwarded to refused it (not leader any more, or full).
   */
  readonly reason: 'leadership-lost' | 'leader-changed' | 'refused';
}

/** The immediate answer of `readIndex`; `pending` ones end in a Ready's readStates/readsFailed. */
export type ReadIndexResult =
  | { readonly kind: 'pending' }
  | {
    /** A (pre-)candidate, or a follower that knows no leader: retry elsewhere or later. */
    readonly kind: 'rejected';
    readonly reason: 'no-leader';
  }
  | {
    /** pendingReadsMax reads already wait here: back-pressure. */
    readonly kind: 'dropped';
    readonly reason: 'too-many-pending';
  };

/**
 * The outcome of `propose`. `accepted` means appended to the leader's log at (index, term),
 * not committed: the proposal took effect if and only if the entry applied at `index` has
 * `term`; another term there means it was lost in a leader change.
 */
export type ProposeResult =
  | { readonly kind: 'accepted'; readonly index: LogIndex; readonly term: Term }
  | {
    readonly kind: 'rejected';
    readonly reason: 'not-leader';
    /** The leader this node knows of, if any: retry there. */
    readonly leaderHint: NodeId | undefined;
  }
  | {
    /** Larger than bytesPerMessageMax: it could never be replicated. */
    readonly kind: 'rejected';
    readonly reason: 'entry-too-large';
    readonly sizeBytes: number;
    readonly sizeBytesMax: number;
  }
  | {
    /**
     * Not appended; retrying later may succeed. `too-many-pending`: pendingProposalsMax
     * entries are not yet committed. `leader-stepping-down`: a leadership transfer is under
     * way (retry at the new leader once it is known).
     */
    readonly kind: 'dropped';
    readonly reason: 'too-many-pending' | 'leader-stepping-down';
  };

/**
 * The outcome of `transferLeadership`. `started` means the transfer is under way: this leader
 * refuses proposals until it ends, and it ends by a new leader (a `leader-changed` event) or by
 * an abort after electionTimeoutMsMin (a `leadership-transfer` event, stage `aborted`).
 */
export type TransferResult =
  | { readonly kind: 'started'; readonly target: NodeId; readonly term: Term }
  | {
    readonly kind: 'rejected';
    readonly reason: 'not-leader';
    readonly leaderHint: NodeId | undefined;
  }
  | {
    /**
     * `no-voter`: this is the only voter, there is nobody to hand over to. `invalid-target`:
     * the named target is this node, not a member, or not a voter (a learner cannot lead).
     */
    readonly kind: 'rejected';
    readonly reason: 'no-voter' | 'invalid-target';
  };

/**
 * The outcome of `proposeMembershipChange`: as `propose` (accepted at an index, not leader,
 * transfer under way), or refused for a membership reason: `change-pending` (the previous
 * change is not committed), `no-commit-in-term` (this leader has not committed an entry of its
 * term yet; retry shortly), `learner-behind` (a promotion before the learner caught up),
 * `invalid-change` (adding a member, promoting a non-learner, removing a stranger or the last
 * voter). `detail` says what, for an operator.
 */
export type MembershipChangeResult =
  | ProposeResult
  | {
    readonly kind: 'rejected';
    readonly reason: 'change-pending' | 'no-commit-in-term' | 'learner-behind' | 'invalid-change';
    readonly detail: string;
  };

export interface PeerProgressStatus {
  readonly id: NodeId;
  readonly matchIndex: LogIndex;
  readonly nextIndex: LogIndex;
  readonly state: ProgressState;
  readonly inflightMessages: number;
  readonly lastContactMs: number;
}

export interface RaftStatus {
  readonly id: NodeId;
  readonly role: RaftRole;
  readonly term: Term;
  readonly vote: NodeId | undefined;
  readonly leaderId: NodeId | undefined;
  readonly commitIndex: LogIndex;
  /** The last index the runtime reported applied (through `advance`). */
  readonly appliedIndex: LogIndex;
  readonly lastIndex: LogIndex;
  readonly lastTerm: Term;
  /** The last index known durable. */
  readonly stableIndex: LogIndex;
  /** The index of the newest snapshot this node holds (0: none). */
  readonly snapshotIndex: LogIndex;
  /** The log holds entries after this index only (compacted or replaced by a snapshot). */
  readonly compactedIndex: LogIndex;
  /** The leader's view of each follower; empty on other roles. */
  readonly progress: readonly PeerProgressStatus[];
  /** The membership in force here (the last config entry in this node's log). */
  readonly membership: Membership;
  /** The target of the leadership transfer under way (leaders only), if any. */
  readonly transferTarget: NodeId | undefined;
  /**
   * How long ago (on this node's clock, as of its last tick) it last heard from a leader: 0
   * while it leads, Infinity if it never has. Unit: ms. What tells "an election is under way"
   * from "this member is cut off from a majority" (src/runtime/core/leaderless.ts).
   */
  readonly leaderContactAgeMs: number;
}
