/**
 * @packageDocumentation
 * Raft as a pure state machine, in the shape of etcd-io/raft's RawNode. A `RaftNode` does no
 * I/O: it takes inputs and queues outputs, and a runtime (src/runtime) turns those outputs into
 * disk writes, network sends and state-machine applies.
 *
 * Inputs: `step(from, message, nowMs)` for a message from a peer, `tick(nowMs)` when time has
 * passed (call it at `nextDeadlineMs()`; earlier or later calls are harmless), and the requests:
 * `propose(data, nowMs)` (leaders only; accepted, rejected or dropped), `readIndex(id, nowMs)`
 * (a linearizable read without a log write, Raft thesis §6.4; answered in a later Ready),
 * `transferLeadership(target, nowMs)` (thesis §3.10), `proposeMembershipChange(change, nowMs)`
 * (one server at a time, thesis §4), and from the runtime `createSnapshot(index, data)`,
 * `compact(index)` (Raft §7) and `peerReset(peer, nowMs)` (the transport's hint that a stream
 * broke: with `preVoteOnLeaderReset`, a reset of the leader's link brings the pre-vote forward;
 * only when a pre-vote starts changes, never what a vote requires). Time only comes in through
 * `nowMs` (a monotonic clock, never going backwards); randomness (election timeout jitter) only
 * through the `Random` given to the constructor.
 *
 * Outputs, the Ready contract. Whenever `hasReady()` is true, take `ready()` and:
 *   1. send `ready.messagesBeforePersist` (a leader's appends and heartbeats: Raft thesis
 *      §10.2.1 lets them leave while the leader writes the same entries to its own disk; the
 *      test-only mutant `ackBeforeSync` puts follower acks here too, which is its bug);
 *   2. persist `ready.snapshot` (if present: an InstallSnapshot from the leader, which replaces
 *      the whole stored log), then `ready.hardState` (if present) and `ready.entries` (an
 *      append that replaces the stored suffix from `entries[0].index` on), in one sync when
 *      `ready.mustSync`;
 *   3. then, and only then, send `ready.messages` (they promise what step 2 stored: a vote, an
 *      acknowledged entry or snapshot, a term);
 *   4. restore the state machine from `ready.snapshot` (if present), then apply
 *      `ready.committedEntries` in order (each committed entry appears in exactly one Ready);
 *      then serve each of `ready.readStates` once the state machine has applied its index, and
 *      fail each of `ready.readsFailed`;
 *   5. call `advance(ready)`: the report that step 2 is durable. A leader counts its own copy
 *      towards commit only from then on (thesis §10.2.1), so an entry commits on a majority of
 *      durable copies, the leader's included or not.
 * A pipelining runtime calls `accept(ready)` once it did steps 1 and 4 and staged step 2's
 * writes; the next Ready may then be built while the write syncs; step 3 and `advance` follow
 * once the write (and every earlier one) is durable, in acceptance order.
 * Between `ready()` and `advance()` the node keeps accepting inputs (so a runtime may await the
 * sync); `hasReady()` stays false and their output waits for the next Ready. Append messages
 * and heartbeat rounds for reads are built in `ready()`, so requests made before one `ready()`
 * travel together: one append per follower, one heartbeat round for all waiting reads
 * (`hasReady()` has no side effects and may be called after every input). After every input,
 * re-arm the one timer at `nextDeadlineMs()`.
 *
 * Before constructing a node from storage, `checkRaftDurableState(state)` lists what makes the
 * state unusable (refuse to start with that message). A WAL that writes a batch's entries before
 * its hard state never hits that on a torn tail.
 *
 * Invariants asserted after every input (a failure is a bug, or a planted mutant): the commit
 * index and the term never decrease; commit <= last index; at most one leader per term in this
 * node's view; a leader never truncates its log; every follower's match <= the leader's last
 * index; committed entries are never overwritten; only what a snapshot covers is compacted.
 * Membership: the last config entry of the log is in force (thesis §4.1); a leader proposes a
 * change only after committing an entry of its term and once the previous change committed.
 *
 * Example (a runtime's loop, simplified: no error handling, one sync per Ready):
 * ```ts
 * const node = new RaftNode({ config: { ...RAFT_DEFAULTS_LAN, id, voters }, random,
 *   state: storage.recovered, nowMs: clock.monotonicMs() });
 * transport.setHandler({
 *   onMessage: (from, m) => { node.step(from, m, clock.monotonicMs()); drain(); },
 * });
 * function drain(): void {
 *   if (!node.hasReady()) {
 *     timerHandle?.cancel(); // one timer, at the node's next deadline
 *     const delayMs = Math.max(0, node.nextDeadlineMs() - clock.monotonicMs());
 *     timerHandle = timer.setTimer(delayMs, () => { node.tick(clock.monotonicMs()); drain(); });
 *     return;
 *   }
 *   const ready = node.ready();
 *   for (const { to, message } of ready.messagesBeforePersist) transport.send(to, message);
 *   if (ready.hardState !== undefined) storage.saveHardState(ready.hardState);
 *   if (ready.entries.length > 0) storage.append(ready.entries);
 *   storage.sync(() => {
 *     for (const { to, message } of ready.messages) transport.send(to, message);
 *     for (const entry of ready.committedEntries) stateMachine.apply(entry);
 *     node.advance(ready);
 *     drain();
 *   });
 * }
 * ```
 */
export { RaftNode, checkRaftDurableState } from './raft-node.js';
export type { RaftNodeOptions } from './raft-node.js';
export {
  RAFT_DEFAULTS_LAN, RAFT_DEFAULTS_LOCAL, RAFT_NO_MUTANTS, validateRaftConfig,
} from './config.js';
export type { RaftConfig, RaftMutants, RaftTuning } from './config.js';
export { describeRaftMessage, TERM_MAX, validateRaftMessage } from './messages.js';
export type {
  AppendRequest, AppendResponse, HeartbeatRequest, HeartbeatResponse, PreVoteRequest,
  PreVoteResponse, RaftEnvelope, RaftMessage, RaftMessageError, RaftMessageKind,
  ReadIndexRequest, ReadIndexResponse, SnapshotRequest, SnapshotResponse, TimeoutNowRequest,
  VoteRequest, VoteResponse,
} from './messages.js';
export { READ_REQUEST_ID_CHARS_MAX } from './messages.js';
export type {
  MembershipChangeResult, PeerProgressStatus, ProposeResult, RaftEvent, RaftRole, RaftStatus,
  ReadFailure,
  ReadIndexResult, ReadState, Ready, RejectionReason, RoleChangeReason, SoftState,
  TermChangeReason, TransferResult,
} from './ready.js';
export { REJECTION_REASONS } from './ready.js';
export { REJECTION_EVENTS_PER_READY_MAX } from './rejections.js';
export type { ProgressState } from './progress.js';
export { ENTRY_OVERHEAD_BYTES, entrySizeBytes } from './log.js';
export type {
  ClientUrlRecord, Entry, EntryKind, HardState, Membership, PeerAddrRecord, RaftDurableState,
  Snapshot, SnapshotMeta,
} from './types.js';
export {
  changedMembership, CLIENT_URL_CHARS_MAX, clientUrlOfMember, clientUrlProblem, decodeMembership,
  encodeMembership, isMember, isVoter, PEER_ADDR_CHARS_MAX, peerAddrProblem, validateClientUrls,
  validatePeerAddrs,
} from './membership.js';
export type { MembershipChange } from './membership.js';
