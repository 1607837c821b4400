/**
 * @packageDocumentation
 * The Raft node runtime: `RaftRuntime` drives a pure `RaftNode` (src/core/raft) through the
 * ports — Clock, Timer, Transport, RaftStorage — in the order the Ready contract demands
 * (persist with one sync per batch, then send, then apply, then advance), and offers what an
 * embedding server needs on top:
 *
 * - `propose(data, done)`: a command through the log (`applied` / `failed` / `unknown`).
 * - `read(done)`: a linearizable read without a log write (ReadIndex, Raft thesis §6.4); on a
 *   follower too (the leader names the index, the follower serves from its own state machine).
 * - `transferLeadership(target, done)` and `shutdown(done)`: hand leadership over (thesis
 *   §3.10) so a planned restart costs no election timeout.
 * - `changeMembership(change, done)` and `addVoter(node, done)`: single-server membership
 *   changes (thesis §4); a new node joins as a learner and is promoted once caught up.
 * - Snapshots (Raft §7), with a state machine that has `snapshot` (or `beginSnapshot`, for a
 *   snapshot encoded in bounded steps over later event-loop turns) and `restore`, and a storage
 *   that keeps snapshots (the WAL): every `snapshotEntries` applied entries (RaftRuntimeConfig).
 *
 * Invariants: nothing that depends on a write (a vote, an acknowledgement, an installed
 * snapshot) leaves the node before that write is durable; a leader's appends do not wait for
 * its own write of the same entries, whose copy counts towards commit only once durable (Raft
 * thesis §10.2.1); every callback is called exactly once; a storage failure stops the node for
 * good (fail-stop).
 *
 * Example:
 * ```ts
 * const opened = openWal(storage, WAL_DEFAULTS);
 * if ('error' in opened) throw new Error(opened.error.message);
 * const runtime = new RaftRuntime(config, { clock, timer, transport, storage: opened.wal,
 *   stateMachine, random }, { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: 50_000 });
 * runtime.propose(command, (outcome) => reply(outcome));
 * runtime.read((outcome) => reply(outcome.kind === 'ready' ? stateMachine.get(key) : outcome));
 * process.on('SIGTERM', () => runtime.shutdown(() => process.exit(0)));
 * ```
 */
export { RaftRuntime } from './raft-runtime.js';
export type {
  MembershipOutcome, ProposalOutcome, RaftRuntimeComponents, ReadOutcome, ShutdownOutcome,
  SnapshotEvent, SnapshotSteps, StateMachine, TransferOutcome,
} from './raft-runtime.js';
export { RAFT_RUNTIME_DEFAULTS, validateRaftRuntimeConfig } from './runtime-config.js';
export { REJECTION_LOG_DEFAULTS, RejectionLog } from './rejection-log.js';
export type {
  MessageRejectedEvent, RejectionLogComponents, RejectionLogConfig,
} from './rejection-log.js';
export type { RaftRuntimeConfig } from './runtime-config.js';
