/**
 * One Raft member as a pure state machine (etcd-io/raft's shape): inputs are `step` (a message
 * from a peer), `tick` (time passed), `propose` (a command); outputs are collected into a
 * `Ready` (see ready.ts for the runtime's duties, in order). No I/O, no clock, no ambient
 * randomness: time arrives as `nowMs`, randomness through the `Random` given at construction.
 *
 * Rules implemented, cited where they apply: Raft §5 (election, log replication, safety),
 * pre-vote and check-quorum (Raft thesis §9.6), leader stickiness, fast log back-off, the
 * no-op entry at the start of a term (§8), pipelined replication with probe/replicate flow
 * control per follower (as etcd).
 */
import { assert, assertNever } from '../assert.js';
import type { LogIndex, NodeId, Term } from '../ids.js';
import { logIndex, term as toTerm } from '../ids.js';
import { crc32c } from '../checksum.js';
import type { Random } from '../random.js';
import { randomFloat, randomInt } from '../random.js';
import type { RaftConfig, RaftMutants } from './config.js';
import { formatConfigProblems } from '../config.js';
import { validateRaftConfig } from './config.js';
import { entrySizeBytes, RaftLog } from './log.js';
import {
  ConfigLog, changedMembership, encodeMembership, type MembershipChange,
} from './membership.js';
import type {
  AppendRequest, AppendResponse, HeartbeatRequest, HeartbeatResponse, PreVoteRequest,
  PreVoteResponse, RaftEnvelope, RaftMessage, ReadIndexResponse, SnapshotRequest,
  SnapshotResponse, VoteRequest, VoteResponse,
} from './messages.js';
import { READ_REQUEST_ID_CHARS_MAX, TERM_MAX } from './messages.js';
import { Progress } from './progress.js';
import { majorityValue, tallyVotes } from './quorum.js';
import { ReadRounds } from './read-index.js';
import type {
  MembershipChangeResult, PeerProgressStatus, ProposeResult, RaftEvent, RaftRole, RaftStatus,
  ReadFailure, ReadIndexResult, ReadState, Ready, RejectionReason, RoleChangeReason, SoftState,
  TermChangeReason, TransferResult,
} from './ready.js';
import { Rejections } from './rejections.js';
import type { Entry, HardState, Membership, RaftDurableState, Snapshot } from './types.js';

export interface RaftNodeOptions {
  readonly config: RaftConfig;
  /** The source of election-timeout jitter; seeded by the caller (the simulator, or the OS). */
  readonly random: Random;
  /** What storage recovered (an empty log and term 0 for a new node). */
  readonly state: RaftDurableState;
  /** The current instant on the node's monotonic clock. */
  readonly nowMs: number;
}

const EMPTY_DATA = new Uint8Array(0);

/**
 * Problems that make a recovered state unusable (empty when usable): a log that is not
 * consecutive from the snapshot's index + 1 (1 without a snapshot) or whose terms decrease, or
 * a commit index past the last index (committed entries were lost), or a term above TERM_MAX
 * (written before terms were bounded: no election could follow). The runtime checks this
 * first to refuse to start with a clear message. (A last entry whose term is above the stored
 * term is fine: a torn write kept the entries but not the hard state written after them; the
 * node adopts that term. A commit index below the snapshot's is raised to it.)
 */
export function checkRaftDurableState(state: RaftDurableState): string[] {
  const problems: string[] = [];
  const { hardState, entries, snapshot } = state;
  const baseIndex = snapshot?.meta.index ?? 0;
  const baseTerm = snapshot?.meta.term ?? 0;
  const lastEntry = entries[entries.length - 1];
  const lastIndex = lastEntry === undefined ? baseIndex : lastEntry.index;
  entries.forEach((e, i) => {
    const expected = baseIndex + i + 1;
    if (e.index !== expected) problems.push(`entry ${i} has index ${e.index}, expected ${expected}`);
    const previous = i === 0 ? baseTerm : (entries[i - 1] as Entry).term;
    if (e.term < previous) problems.push(`entry ${e.index} has term ${e.term} < ${previous}`);
  });
  if (hardState.commitIndex > lastIndex) {
    problems.push(`commit index ${hardState.commitIndex} is past the last entry ${lastIndex}`);
  }
  const lastTerm = lastEntry?.term ?? baseTerm;
  if (Math.max(hardState.term, lastTerm) > TERM_MAX) {
    problems.push(`term ${Math.max(hardState.term, lastTerm)} is above TERM_MAX (${TERM_MAX})`);
  }
  return problems;
}

export class RaftNode {
  private readonly config: RaftConfig;
  private readonly id: NodeId;
  /** The membership in force (the last config entry in the log, thesis §4.1). */
  private readonly configLog: ConfigLog;
  private voters: readonly NodeId[] = [];
  /** Every other member, voters and learners: whom a leader replicates to. */
  private peers: readonly NodeId[] = [];
  private readonly random: Random;
  private readonly mutants: RaftMutants;
  private readonly preVoteOn: boolean;
  private readonly checkQuorumOn: boolean;
  /** Followers ignore (pre-)votes while they hear from a live leader. */
  private readonly stickinessOn: boolean;

  // Persistent state (Raft Figure 2), stored through Ready.hardState and Ready.entries.
  private currentTerm: Term;
  private vote: NodeId | undefined;
  private commitIndex: LogIndex;
  private readonly log: RaftLog;

  // Volatile state.
  private role: RaftRole = 'follower';
  private leaderId: NodeId | undefined = undefined;
  /** The leader seen in `currentTerm`, kept after step-downs: at most one per term. */
  private leaderOfTerm: NodeId | undefined = undefined;
  /**
   * Follower: the leader's appends of `provenTerm` proved this log equal to the leader's up to
   * `provenIndex` (Log Matching). See `leaderMatchIndex`.
   */
  private provenTerm: Term = toTerm(0);
  private provenIndex: LogIndex = logIndex(0);
  /** Beyond the members of every configuration held: whom else this node hears. */
  private readonly knownPeers: readonly NodeId[];
  private nowMs: number;
  private electionDeadlineMs = 0;
  /** When this node last heard from its leader (leader stickiness). */
  private leaderContactMs = Number.NEGATIVE_INFINITY;
  /**
   * Members whose stream the transport reported broken since their last message (`peerReset`):
   * a hint that the process is gone. At most one entry per member.
   */
  private readonly resetPeers = new Set<NodeId>();
  private heartbeatDeadlineMs = Number.POSITIVE_INFINITY;
  /** (Pre-)vote answers in the current campaign, this node's own included. */
  private votes = new Map<NodeId, boolean>();
  private progress = new Map<NodeId, Progress>();
  /** Mutant voteNotPersisted: the vote of this term is kept out of hardState. */
  private voteHiddenFromStorage = false;
  /** Leadership transfer under way (leaders only): the target, and when to give up. */
  private transferTarget: NodeId | undefined = undefined;
  private transferDeadlineMs = Number.POSITIVE_INFINITY;
  /** A transfer started in this term: lease-based reads are off until the next term. */
  private transferredInTerm = false;
  /** Leader: reads waiting for a heartbeat round (thesis §6.4). */
  private readRounds = new ReadRounds();
  /** Follower: reads forwarded to the leader, by request id. */
  private forwardedReads = new Map<string, NodeId>();
  /** Leader with lease-based reads: reads are answered locally before this instant. */
  private readLeaseUntilMs = Number.NEGATIVE_INFINITY;
  /** With lease-based reads, a node refuses votes for electionTimeoutMsMin after it starts. */
  private readonly startQuietUntilMs: number;
  /** The newest snapshot (local or installed): what a follower gets when the log is too short. */
  private snapshot: Snapshot | undefined;
  private snapshotChecksum = 0;
  /** An installed snapshot for the next Ready to persist (and the runtime to restore). */
  private pendingSnapshot: Snapshot | undefined = undefined;
  /** Follower: the snapshot being received, chunk by chunk. */
  private snapshotAssembly: SnapshotAssembly | undefined = undefined;

  // Ready bookkeeping.
  private messages: RaftEnvelope[] = [];
  private messagesBeforePersist: RaftEnvelope[] = [];
  private events: RaftEvent[] = [];
  /** Messages dropped since the last Ready, for its events. */
  private readonly rejections = new Rejections();
  private readStates: ReadState[] = [];
  private readsFailed: ReadFailure[] = [];
  private readyHardState: HardState;
  private readySoftState: SoftState;
  /** Committed entries up to here were handed out in a Ready. */
  private applyingIndex: LogIndex;
  /** Committed entries up to here were applied (their Ready accepted or advanced). */
  private appliedIndex: LogIndex;
  private outstanding: Ready | undefined = undefined;
  /** Readies accepted (applied, writes handed to storage) and not yet durable, oldest first. */
  private accepted: Ready[] = [];
  /** The term and vote known durable: recovered, or in the last advanced Ready's hardState. */
  private durableTerm: Term;
  private durableVote: NodeId | undefined;

  // Values remembered only to assert that they never go backwards.
  private checkedCommitIndex: LogIndex;
  private checkedTerm: Term;
  private leaderLastIndexFloor: LogIndex = logIndex(0);

  constructor(options: RaftNodeOptions) {
    const { config, random, state, nowMs } = options;
    const configProblems = validateRaftConfig(config);
    assert(configProblems.length === 0,
      () => `invalid raft config:\n${formatConfigProblems(configProblems)}`);
    const stateProblems = checkRaftDurableState(state);
    assert(stateProblems.length === 0,
      () => `unusable recovered raft state: ${stateProblems.join('; ')}`);
    assert(Number.isFinite(nowMs), () => `nowMs must be finite: ${nowMs}`);
    this.config = config;
    this.id = config.id;
    this.knownPeers = config.knownPeers ?? [];
    this.random = random;
    this.mutants = config.mutants;
    // MUTANT preVoteWithoutCheckQuorum: pre-vote on, check-quorum and stickiness off.
    const mutantNoCheckQuorum = config.mutants.preVoteWithoutCheckQuorum;
    this.preVoteOn = config.preVote || mutantNoCheckQuorum;
    this.checkQuorumOn = config.checkQuorum && !mutantNoCheckQuorum;
    this.stickinessOn = (config.checkQuorum || config.preVote) && !mutantNoCheckQuorum;
    const snapshot = state.snapshot;
    this.log = new RaftLog(state.entries, snapshot === undefined
      ? undefined
      : { index: snapshot.meta.index, term: snapshot.meta.term });
    this.setSnapshot(snapshot);
    this.configLog = new ConfigLog(
      snapshot?.meta.membership ?? { voters: config.voters, learners: config.learners ?? [] },
      snapshot?.meta.index ?? 0, state.entries);
    this.applyMembership();
    this.currentTerm = state.hardState.term;
    this.vote = state.hardState.vote;
    if (this.log.lastTerm() > this.currentTerm) {
      // Entries outlived the hard state stored after them. Nothing was sent on their account
      // (messages wait for the sync), so taking their term with no vote is safe; the first
      // Ready persists it.
      this.currentTerm = this.log.lastTerm();
      this.vote = undefined;
    }
    // A snapshot holds committed entries only; the runtime restores the state machine from it.
    const snapshotIndex = snapshot?.meta.index ?? logIndex(0);
    this.commitIndex = logIndex(Math.max(state.hardState.commitIndex, snapshotIndex));
    this.nowMs = nowMs;
    this.readyHardState = state.hardState;
    this.durableTerm = state.hardState.term;
    this.durableVote = state.hardState.vote;
    this.readySoftState = this.softState();
    this.applyingIndex = snapshotIndex;
    this.appliedIndex = snapshotIndex;
    this.checkedCommitIndex = this.commitIndex;
    this.checkedTerm = this.currentTerm;
    this.startQuietUntilMs = config.leaseBasedReads
      ? nowMs + config.electionTimeoutMsMin
      : Number.NEGATIVE_INFINITY;
    this.resetElectionTimer();
  }

  // ---------------------------------------------------------------------------------------
  // Inputs

  /**
   * A message from `from`. It must have passed `validateRaftMessage` (its shape), and is then
   * judged against what this node knows before it changes anything: a message from a node that
   * is no member of any configuration held here (nor a `knownPeers` entry), from this node
   * itself, with a term above TERM_MAX, claiming to lead a term another node leads, or
   * contradicting committed or proven entries, is dropped and reported as a `message-rejected`
   * event with its reason (`RejectionReason`). Never an assertion: input is not our invariant.
   */
  step(from: NodeId, message: RaftMessage, nowMs: number): void {
    this.advanceTime(nowMs);
    if (from === this.id) this.reject(from, message, 'from-self');
    else this.stepMessage(from, message);
    this.checkInvariants();
  }

  /**
   * The transport's hint that the stream to `peer` broke (reset, refused, or closed without a
   * goodbye). With `preVoteOnLeaderReset`, a follower whose leader's link broke starts its
   * pre-vote within leaderResetDelayRatioMax × electionTimeoutMsMin, and, while no message of
   * the leader came since, sets stickiness aside for others' pre-votes (see `inLeaderLease`).
   * Any later message from `peer` clears the hint. Safety never rests on it: only when a
   * pre-vote starts changes.
   */
  peerReset(peer: NodeId, nowMs: number): void {
    this.advanceTime(nowMs);
    // Only members count; the set stays bounded by the membership.
    if (peer !== this.id && this.peers.includes(peer)) {
      this.resetPeers.add(peer);
      if (this.role === 'follower' && this.leaderResetSeen()) this.hastenPreVote();
    }
    this.checkInvariants();
  }

  /** Time passed: fires whatever is due (election, heartbeat, check-quorum). */
  tick(nowMs: number): void {
    this.advanceTime(nowMs);
    if (this.role === 'leader') this.tickLeader();
    else this.tickElection();
    this.checkInvariants();
  }

  /**
   * Appends a command to the leader's log. Proposals made between two `ready()` calls are
   * replicated together: one append message per follower for the whole batch.
   * `data` is kept by reference: do not change it afterwards.
   */
  propose(data: Uint8Array, nowMs: number): ProposeResult {
    this.advanceTime(nowMs);
    if (this.role !== 'leader') {
      return { kind: 'rejected', reason: 'not-leader', leaderHint: this.leaderId };
    }
    // Thesis §3.10: a transferring leader stops taking proposals, so the target's log can
    // catch up with a log that no longer grows.
    if (this.transferTarget !== undefined) return { kind: 'dropped', reason: 'leader-stepping-down' };
    const entry: Entry = {
      index: logIndex(this.log.lastIndex() + 1), term: this.currentTerm, kind: 'normal', data,
    };
    if (entrySizeBytes(entry) > this.config.bytesPerMessageMax) {
      return { kind: 'rejected', reason: 'entry-too-large', sizeBytes: entrySizeBytes(entry),
        sizeBytesMax: this.config.bytesPerMessageMax };
    }
    if (this.log.lastIndex() - this.commitIndex >= this.config.pendingProposalsMax) {
      return { kind: 'dropped', reason: 'too-many-pending' };
    }
    this.log.append(entry);
    this.checkInvariants();
    return { kind: 'accepted', index: entry.index, term: entry.term };
  }

  /**
   * Proposes a single-server membership change (Raft thesis §4): a `config` entry holding the
   * new membership, in force as soon as it is appended. Refused unless this leader has
   * committed an entry of its current term (the fix of the single-server change bug) and the
   * previous change is committed (one at a time); a promotion also waits for the learner to
   * hold every committed entry. A leader that removes itself leads until the change commits,
   * then steps down (and hands over with timeout-now when a voter is up to date).
   */
  proposeMembershipChange(change: MembershipChange, nowMs: number): MembershipChangeResult {
    this.advanceTime(nowMs);
    if (this.role !== 'leader') {
      return { kind: 'rejected', reason: 'not-leader', leaderHint: this.leaderId };
    }
    if (this.transferTarget !== undefined) return { kind: 'dropped', reason: 'leader-stepping-down' };
    const refusal = this.membershipChangeRefusal(change);
    if (refusal !== undefined) return refusal;
    const next = changedMembership(this.configLog.current(), change);
    if (typeof next === 'string') return { kind: 'rejected', reason: 'invalid-change', detail: next };
    const entry: Entry = { index: logIndex(this.log.lastIndex() + 1), term: this.currentTerm,
      kind: 'config', data: encodeMembership(next) };
    this.log.append(entry);
    this.configLog.append([entry]);
    this.applyMembership();
    this.checkInvariants();
    return { kind: 'accepted', index: entry.index, term: entry.term };
  }

  /** Why a membership change may not be proposed now (undefined: it may). */
  private membershipChangeRefusal(change: MembershipChange): MembershipChangeResult | undefined {
    if (this.configLog.latestIndex() > this.commitIndex) {
      return { kind: 'rejected', reason: 'change-pending',
        detail: `the change at index ${this.configLog.latestIndex()} is not committed yet` };
    }
    // Thesis §4.1 (corrected): an uncommitted change of an earlier leader may still win;
    // once an entry of this term commits, it cannot. MUTANT configChangeBeforeTermCommit.
    if (!this.committedInTerm() && !this.mutants.configChangeBeforeTermCommit) {
      return { kind: 'rejected', reason: 'no-commit-in-term',
        detail: `no entry of term ${this.currentTerm} is committed yet` };
    }
    if (change.kind === 'promote') {
      const match = this.progress.get(change.node)?.matchIndex ?? 0;
      if (match < this.commitIndex) {
        return { kind: 'rejected', reason: 'learner-behind',
          detail: `${change.node} holds up to ${match}, the commit index is ${this.commitIndex}` };
      }
    }
    return undefined;
  }

  /**
   * Asks for a linearizable read without a log write (Raft thesis §6.4, ReadIndex). `pending`:
   * the answer comes in a later Ready, as a `ReadState` (serve the read once the state machine
   * applied its index) or a `ReadFailure`. A leader answers once it has committed an entry of
   * its term and a majority answered a heartbeat round sent after the request (reads arriving
   * together share one round); with `leaseBasedReads`, at once while its lease holds. A
   * follower forwards the request to its leader (the leader's answer names the index; the
   * follower then serves it from its own state machine). `requestId` must be unique among this
   * node's pending reads.
   */
  readIndex(requestId: string, nowMs: number): ReadIndexResult {
    this.advanceTime(nowMs);
    assert(requestId.length > 0 && requestId.length <= READ_REQUEST_ID_CHARS_MAX,
      () => `readIndex: request id of ${requestId.length} characters`);
    // MUTANT readsWithoutReadIndex: any node answers from its own state, unconfirmed.
    if (this.mutants.readsWithoutReadIndex) {
      this.readStates.push({ requestId, index: this.commitIndex });
      return { kind: 'pending' };
    }
    if (this.role === 'leader') {
      const accepted = this.leaderRead(requestId, undefined);
      this.checkInvariants();
      return accepted ? { kind: 'pending' } : { kind: 'dropped', reason: 'too-many-pending' };
    }
    const leader = this.leaderId;
    if (this.role !== 'follower' || leader === undefined) {
      return { kind: 'rejected', reason: 'no-leader' };
    }
    if (this.forwardedReads.size >= this.config.pendingReadsMax) {
      return { kind: 'dropped', reason: 'too-many-pending' };
    }
    assert(!this.forwardedReads.has(requestId), () => `readIndex: ${requestId} is pending`);
    this.forwardedReads.set(requestId, leader);
    this.send(leader, { kind: 'read-index', term: this.currentTerm, requestId });
    return { kind: 'pending' };
  }

  /**
   * Hands leadership to `target`, or when undefined to the voter whose log is most up to date
   * (Raft thesis §3.10). The leader stops taking proposals, brings the target's log up to its
   * own, then sends it `timeout-now`; the target campaigns at once (no pre-vote, voters set
   * stickiness aside for it). Gives up after electionTimeoutMsMin and leads on. Calling it
   * again for the same target while a transfer runs changes nothing; for another target it
   * restarts the transfer towards that one.
   */
  transferLeadership(target: NodeId | undefined, nowMs: number): TransferResult {
    this.advanceTime(nowMs);
    if (this.role !== 'leader') {
      return { kind: 'rejected', reason: 'not-leader', leaderHint: this.leaderId };
    }
    const chosen = target ?? this.mostUpToDateVoter();
    if (chosen === undefined) return { kind: 'rejected', reason: 'no-voter' };
    if (chosen === this.id || !this.voters.includes(chosen) || !this.progress.has(chosen)) {
      return { kind: 'rejected', reason: 'invalid-target' };
    }
    if (this.transferTarget !== chosen) {
      if (this.transferTarget !== undefined) this.abortTransfer();
      this.transferTarget = chosen;
      this.transferDeadlineMs = this.nowMs + this.config.electionTimeoutMsMin;
      // The target's forced votes bypass stickiness: no lease may be trusted in this term.
      this.transferredInTerm = true;
      this.readLeaseUntilMs = Number.NEGATIVE_INFINITY;
      this.events.push({ kind: 'leadership-transfer', term: this.currentTerm, target: chosen,
        stage: 'started' });
      this.maybeSendTimeoutNow(chosen);
    }
    this.checkInvariants();
    return { kind: 'started', target: chosen, term: this.currentTerm };
  }

  /**
   * The next instant at which `tick` has work (election timeout, heartbeat, check-quorum):
   * a runtime sets one timer for it. `Infinity` when nothing is scheduled. Changes after every
   * input, so read it again after each `step`, `tick`, `propose` or `advance`.
   */
  nextDeadlineMs(): number {
    if (this.role === 'leader') {
      return Math.min(this.heartbeatDeadlineMs, this.transferDeadlineMs,
        this.checkQuorumOn ? this.quorumContactDeadlineMs() : Number.POSITIVE_INFINITY);
    }
    return this.canCampaign() ? this.electionDeadlineMs : Number.POSITIVE_INFINITY;
  }

  // ---------------------------------------------------------------------------------------
  // Outputs

  /**
   * Whether `ready()` has work. False while a Ready is outstanding (handed out, neither
   * accepted nor advanced). No side effects: calling it after every input does not break
   * batching.
   */
  hasReady(): boolean {
    if (this.outstanding !== undefined) return false;
    return this.replicationPending() || this.readRounds.wantsRound() ||
      this.rejections.pending ||
      this.pendingSnapshot !== undefined ||
      this.readStates.length > 0 || this.readsFailed.length > 0 ||
      this.messages.length > 0 || this.messagesBeforePersist.length > 0 ||
      this.events.length > 0 || this.log.hasUnpersisted() ||
      this.commitIndex > this.applyingIndex || this.hardStateChanged() ||
      this.softStateChanged();
  }

  /** The next batch of work; see {@link Ready} for what to do with it, in which order. */
  ready(): Ready {
    assert(this.outstanding === undefined,
      'ready() called before accept() or advance() of the previous one');
    this.flushReplication();
    if (this.readRounds.wantsRound()) this.broadcastHeartbeat();
    const hardState = this.hardStateForStorage();
    const hardStateChanged = !sameHardState(hardState, this.readyHardState);
    const termOrVoteChanged = hardState.term !== this.readyHardState.term ||
      hardState.vote !== this.readyHardState.vote;
    const termAndVoteDurable = hardState.term === this.durableTerm &&
      hardState.vote === this.durableVote;
    const softState = this.softState();
    const entries = this.log.unpersisted();
    const snapshot = this.pendingSnapshot;
    const { early, afterPersist } = this.splitMessages(termAndVoteDurable);
    const ready: Ready = {
      softState: sameSoftState(softState, this.readySoftState) ? undefined : softState,
      hardState: hardStateChanged ? hardState : undefined,
      snapshot,
      entries,
      mustSync: snapshot !== undefined || entries.length > 0 || termOrVoteChanged,
      messagesBeforePersist: early,
      messages: afterPersist,
      committedEntries: this.log.slice(this.applyingIndex + 1, this.commitIndex),
      readStates: this.readStates,
      readsFailed: this.readsFailed,
      events: this.rejections.pending
        ? [...this.events, ...this.rejections.take()]
        : this.events,
    };
    this.log.markPersistRequested();
    this.pendingSnapshot = undefined;
    this.readyHardState = hardState;
    this.readySoftState = softState;
    this.applyingIndex = this.commitIndex;
    this.messages = [];
    this.messagesBeforePersist = [];
    this.readStates = [];
    this.readsFailed = [];
    this.events = [];
    this.outstanding = ready;
    return ready;
  }

  /**
   * Which queued messages may leave before this Ready's writes are durable, and which must wait.
   *
   * Raft thesis §10.2.1: a leader may send AppendEntries for new entries in parallel with
   * writing them to its own disk, provided it counts its own copy towards commit only once that
   * write is durable (`advance`, see `maybeCommit`): an entry then commits on a majority of
   * durable copies, with or without the leader's. So a leader's appends, heartbeats, snapshot
   * chunks and timeout-now go early; they promise nothing about this node's disk. They carry
   * the term, though: until the current term and vote are known durable (this Ready or an
   * earlier one still being written changes them), everything waits for the sync (Raft Figure
   * 2: currentTerm and votedFor are stored before any message depends on them). Everything
   * else waits too: votes, and a follower's acks (which promise durability; the mutant
   * ackBeforeSync queues those early on purpose).
   */
  private splitMessages(termAndVoteDurable: boolean):
    { early: RaftEnvelope[]; afterPersist: RaftEnvelope[] } {
    const early = this.messagesBeforePersist;
    if (!termAndVoteDurable) return { early, afterPersist: this.messages };
    const afterPersist: RaftEnvelope[] = [];
    for (const envelope of this.messages) {
      if (fromLeaderOnly(envelope.message)) early.push(envelope);
      else afterPersist.push(envelope);
    }
    return { early, afterPersist };
  }

  /**
   * The runtime has made `ready`'s writes durable, sent its messages and applied its committed
   * entries: `ready` is the object `ready()` returned last, or the oldest Ready passed to
   * `accept` (then it was applied already, and this reports only the durability). A leader
   * counts its own entries towards commit only from here (its appends may have left before:
   * thesis §10.2.1, see `splitMessages`).
   */
  advance(ready: Ready): void {
    if (this.accepted[0] === ready) {
      this.accepted.shift();
    } else {
      assert(ready === this.outstanding,
        'advance() of a Ready that is neither the outstanding one nor the oldest accepted one');
      assert(this.accepted.length === 0,
        () => `advance() of a new Ready before the ${this.accepted.length} accepted ones`);
      this.noteApplied(ready);
      this.outstanding = undefined;
    }
    const lastEntry = ready.entries[ready.entries.length - 1];
    if (lastEntry !== undefined) this.log.stableTo(lastEntry.index, lastEntry.term);
    if (ready.hardState !== undefined) {
      this.durableTerm = ready.hardState.term;
      this.durableVote = ready.hardState.vote;
    }
    // Thesis §10.2.1: the leader's own copy counts from here, when it is durable.
    if (this.role === 'leader') this.maybeCommit();
    this.checkInvariants();
  }

  /**
   * Pipelining (Raft thesis §10.2.1, and group commit on every node): the runtime has sent
   * `ready.messagesBeforePersist`, handed the Ready's writes to storage behind those of earlier
   * Readies, and applied `ready.committedEntries`, but the writes are not durable yet. From
   * now on `ready()` may be called again, so the next batch is built and replicated while this
   * one syncs. The runtime holds `ready.messages` and calls `advance(ready)` once the writes
   * are durable, for accepted Readies in the order they were accepted (and before advancing a
   * Ready it did not accept). A Ready that carries a snapshot cannot be accepted: persist it,
   * then `advance` it, after every accepted Ready was advanced.
   */
  accept(ready: Ready): void {
    assert(ready === this.outstanding, 'accept() of a Ready that is not the outstanding one');
    assert(ready.snapshot === undefined, 'accept() of a Ready that installs a snapshot');
    this.noteApplied(ready);
    this.outstanding = undefined;
    this.accepted.push(ready);
    this.checkInvariants();
  }

  /** The runtime applied `ready`'s committed entries (after restoring its snapshot, if any). */
  private noteApplied(ready: Ready): void {
    if (ready.snapshot !== undefined) this.appliedIndex = ready.snapshot.meta.index;
    const lastApplied = ready.committedEntries[ready.committedEntries.length - 1];
    if (lastApplied !== undefined) this.appliedIndex = lastApplied.index;
  }

  status(): RaftStatus {
    const progress: PeerProgressStatus[] = [];
    for (const [id, pr] of this.progress) {
      progress.push({ id, matchIndex: pr.matchIndex, nextIndex: pr.nextIndex, state: pr.state,
        inflightMessages: pr.inflights.count(), lastContactMs: pr.lastContactMs });
    }
    return {
      id: this.id, role: this.role, term: this.currentTerm, vote: this.vote,
      leaderId: this.leaderId, commitIndex: this.commitIndex, appliedIndex: this.appliedIndex,
      lastIndex: this.log.lastIndex(), lastTerm: this.log.lastTerm(),
      stableIndex: this.log.getStableIndex(), progress, transferTarget: this.transferTarget,
      membership: this.configLog.current(),
      snapshotIndex: this.snapshot?.meta.index ?? logIndex(0),
      compactedIndex: this.log.getBaseIndex(),
      leaderContactAgeMs: this.role === 'leader' ? 0
        : Math.max(0, this.nowMs - this.leaderContactMs),
    };
  }

  /**
   * The membership in force (as `status().membership`, without building the rest): the same
   * object until a config entry or a snapshot changes it, so callers may compare identities.
   */
  membership(): Membership {
    return this.configLog.current();
  }

  /** The log entry at `index` (for tests and checkers), or undefined (absent or compacted). */
  entry(index: LogIndex): Entry | undefined {
    return this.log.term(index) === undefined || index <= this.log.getBaseIndex()
      ? undefined
      : this.log.entryAt(index);
  }

  /** The term of the entry at `index`, the compacted base included; undefined if unknown. */
  termAt(index: LogIndex): Term | undefined {
    return this.log.term(index);
  }

  /**
   * Records a snapshot the state machine took after applying the log up to `index` (Raft §7);
   * returns it, with its term and membership, for the runtime to persist. From now on it is what
   * followers that lag behind the log get. The log is not compacted until `compact`.
   * `checksum`: the CRC-32C of `data` when the caller computed it already (in slices, so a large
   * snapshot does not stall the event loop); computed here otherwise.
   */
  createSnapshot(index: LogIndex, data: Uint8Array, checksum?: number): Snapshot {
    assert(index <= this.appliedIndex,
      () => `snapshot at ${index} past the applied index ${this.appliedIndex}`);
    assert(index > (this.snapshot?.meta.index ?? 0),
      () => `snapshot at ${index} not after the last one (${this.snapshot?.meta.index})`);
    const term = this.log.term(index);
    assert(term !== undefined, () => `snapshot at ${index}: the log no longer holds its term`);
    const snapshot: Snapshot = { meta: { index, term, membership: this.membershipAt(index) }, data };
    this.setSnapshot(snapshot, checksum);
    return snapshot;
  }

  /**
   * Drops the log entries up to `index` from memory (Raft §7 log compaction). `index` must be
   * covered by the snapshot (`createSnapshot`) and applied. Keeping some entries below the
   * snapshot's index lets slightly lagging followers catch up with appends, not the snapshot.
   */
  compact(index: LogIndex): void {
    assert(index <= (this.snapshot?.meta.index ?? 0) && index <= this.appliedIndex,
      () => `compact to ${index}: snapshot ${this.snapshot?.meta.index}, applied ` +
        `${this.appliedIndex}`);
    this.log.compact(index);
    this.configLog.compact(this.log.getBaseIndex());
    this.checkInvariants();
  }

  // ---------------------------------------------------------------------------------------
  // Message dispatch and the generation clock (Raft §5.1)

  private stepMessage(from: NodeId, m: RaftMessage): void {
    // A fresh message: the peer reconnected, so its reset hint no longer holds. If the hint
    // had brought the leader's pre-vote forward, the usual timeout applies again.
    const refusal = this.senderRefusal(from, m);
    if (refusal !== undefined) {
      // MUTANT trustSenderTerm: the claimed term is adopted before the message is judged.
      if (this.mutants.trustSenderTerm && m.term > this.currentTerm) {
        this.becomeFollower(m.term, undefined, 'higher-term-seen');
      }
      this.reject(from, m, refusal);
      return;
    }
    if (this.resetPeers.delete(from) && from === this.leaderId && this.role === 'follower') {
      this.resetElectionTimer();
    }
    if (m.term > this.currentTerm) {
      if (!this.stepHigherTerm(from, m)) return;
    } else if (m.term < this.currentTerm) {
      this.stepLowerTerm(from, m);
      return;
    }
    switch (m.kind) {
      case 'pre-vote':
      case 'vote':
        this.stepVoteRequest(from, m);
        return;
      case 'pre-vote-response':
      case 'vote-response':
        this.stepVoteResponse(from, m);
        return;
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        this.stepFromLeader(from, m);
        return;
      case 'snapshot-response':
        this.stepSnapshotResponse(from, m);
        return;
      case 'append-response':
        this.stepAppendResponse(from, m);
        return;
      case 'heartbeat-response':
        this.stepHeartbeatResponse(from, m);
        return;
      case 'timeout-now':
        this.stepTimeoutNow(from, m);
        return;
      case 'read-index':
        this.stepReadIndex(from, m.requestId);
        return;
      case 'read-index-response':
        this.stepReadIndexResponse(from, m);
        return;
      default:
        assertNever(m, 'raft message kind');
    }
  }

  /**
   * Why `m` is dropped before its term is even looked at (undefined: it is not). Identity and
   * range come first, so a forger can neither raise this node's term nor win its attention.
   */
  private senderRefusal(from: NodeId, m: RaftMessage): RejectionReason | undefined {
    if (!this.knowsSender(from)) return 'unknown-sender';
    if (m.term > TERM_MAX) return 'term-out-of-range';
    // A grant carries the term that was asked for: this node's (a vote) or the next (pre-vote).
    if (m.kind === 'vote-response' && m.granted && m.term > this.currentTerm) {
      return 'unexpected-grant';
    }
    if (m.kind === 'pre-vote-response' && m.granted && m.term > this.currentTerm + 1) {
      return 'unexpected-grant';
    }
    return undefined;
  }

  /**
   * Whether this node hears `from`: a member of some configuration it holds (thesis §4: a
   * member being added or removed still talks), or a known peer.
   */
  private knowsSender(from: NodeId): boolean {
    return this.peers.includes(from) || this.configLog.knows(from) ||
      this.knownPeers.includes(from);
  }

  /** Drops `m`, reporting why in the next Ready's events. */
  private reject(from: NodeId, m: RaftMessage, reason: RejectionReason): void {
    this.rejections.add(from, m, reason);
  }

  /** A message from a higher term. Returns false when it is to be ignored. */
  private stepHigherTerm(from: NodeId, m: RaftMessage): boolean {
    if (m.kind === 'pre-vote' || m.kind === 'vote') {
      // Leader stickiness (thesis §9.6): while this node hears from a live leader it neither
      // raises its term nor votes, so a disruptive node cannot depose a healthy leader. A
      // transfer's vote is the leader's own wish (thesis §3.10): it passes.
      const forced = m.kind === 'vote' && m.transfer === true;
      if (!forced && this.inLeaderLease()) return false;
      // A pre-vote never changes the receiver's term: it is only a question.
      if (m.kind === 'pre-vote') return true;
    }
    // A granted pre-vote carries the term this node proposed, not a term seen elsewhere.
    if (m.kind === 'pre-vote-response' && m.granted) return true;
    // Only the leader of a term sends these: the sender leads m.term.
    const fromLeader = m.kind === 'append' || m.kind === 'heartbeat' ||
      m.kind === 'timeout-now' || m.kind === 'snapshot';
    this.becomeFollower(m.term, fromLeader ? from : undefined, 'higher-term-seen');
    return true;
  }

  /** Raft §5.1: refuse a request of a lower term with the current term; drop stale answers. */
  private stepLowerTerm(from: NodeId, m: RaftMessage): void {
    const term = this.currentTerm;
    switch (m.kind) {
      case 'append':
      case 'snapshot':
        this.send(from, { kind: 'append-response', term, success: false,
          index: logIndex(0), hintIndex: logIndex(0), hintTerm: toTerm(0) });
        return;
      case 'heartbeat':
        this.send(from, { kind: 'heartbeat-response', term });
        return;
      case 'vote':
        this.send(from, { kind: 'vote-response', term, granted: false });
        return;
      case 'pre-vote':
        this.send(from, { kind: 'pre-vote-response', term, granted: false });
        return;
      case 'read-index':
        this.refuseRead(from, m.requestId);
        return;
      case 'pre-vote-response':
      case 'vote-response':
      case 'append-response':
      case 'heartbeat-response':
      case 'timeout-now':
      case 'read-index-response':
      case 'snapshot-response':
        return;
      default:
        assertNever(m, 'raft message kind');
    }
  }

  /**
   * Whether this node believes in a live leader (itself included), so ignores (pre-)votes of a
   * higher term, except a leadership transfer's forced vote.
   */
  private inLeaderLease(): boolean {
    if (this.role === 'leader') return this.checkQuorumOn;
    // Lease-based reads: in its previous life this node may have answered a heartbeat round
    // that granted some leader a lease; it keeps that promise across a restart.
    if (this.nowMs < this.startQuietUntilMs) return true;
    // Thesis §9.6 stickiness, unless this node too saw the leader's link reset since its last
    // message: a majority that saw it means the leader process is gone. Not with lease-based
    // reads, whose lease rests on stickiness alone.
    return this.stickinessOn && this.leaderId !== undefined &&
      this.nowMs - this.leaderContactMs < this.config.electionTimeoutMsMin &&
      (this.config.leaseBasedReads || !this.leaderResetSeen());
  }

  /** Whether the stream to the current leader broke since its last message, and it counts. */
  private leaderResetSeen(): boolean {
    return this.preVoteOn && this.config.preVoteOnLeaderReset && this.leaderId !== undefined &&
      this.leaderId !== this.id && this.resetPeers.has(this.leaderId);
  }

  /**
   * Brings the pre-vote forward to an instant within leaderResetDelayRatioMax ×
   * electionTimeoutMsMin: only when a pre-vote starts changes (thesis §9.6 keeps it harmless).
   * The span has one slot per voter that may campaign (every voter but the leader, in id
   * order), and each node starts at a random point of its own slot: followers that saw the same
   * reset almost never pre-vote within one network delay of each other, which would split the
   * vote and cost a whole election timeout.
   */
  private hastenPreVote(): void {
    if (!this.canCampaign()) return;
    const { leaderResetDelayRatioMax: ratio, electionTimeoutMsMin } = this.config;
    const campaigners = this.voters.filter((id) => id !== this.leaderId).sort();
    const slotMs = (ratio * electionTimeoutMsMin) / campaigners.length;
    const slot = campaigners.indexOf(this.id);
    assert(slot >= 0, () => `${this.id} is a voter but not among ${campaigners.join(',')}`);
    const delayMs = slotMs * (slot + randomFloat(this.random));
    this.electionDeadlineMs = Math.min(this.electionDeadlineMs, this.nowMs + delayMs);
  }

  // ---------------------------------------------------------------------------------------
  // Elections (Raft §5.2, §5.4.1; pre-vote: thesis §9.6)

  private stepVoteRequest(from: NodeId, m: PreVoteRequest | VoteRequest): void {
    const responseKind = m.kind === 'pre-vote' ? 'pre-vote-response' : 'vote-response';
    const canVote = this.vote === from ||
      (this.vote === undefined && this.leaderId === undefined) ||
      (m.kind === 'pre-vote' && m.term > this.currentTerm);
    // Raft §5.4.1: deny a vote to a candidate whose log is less up to date than ours.
    if (canVote && this.log.isUpToDate(m.lastLogIndex, m.lastLogTerm)) {
      // The answer carries the request's term: a pre-candidate ignores lower terms.
      this.send(from, { kind: responseKind, term: m.term, granted: true });
      if (m.kind === 'vote') {
        this.vote = from;
        // MUTANT voteNotPersisted: the vote is not written to storage before the answer.
        if (this.mutants.voteNotPersisted) this.voteHiddenFromStorage = true;
        this.resetElectionTimer();
      }
    } else {
      this.send(from, { kind: responseKind, term: this.currentTerm, granted: false });
    }
  }

  private stepVoteResponse(from: NodeId, m: PreVoteResponse | VoteResponse): void {
    if (m.kind === 'pre-vote-response') {
      if (this.role !== 'pre-candidate') return;
      // Grants carry the proposed term; an older grant belongs to an earlier pre-campaign.
      if (m.granted && m.term !== this.currentTerm + 1) return;
    } else if (this.role !== 'candidate') {
      return;
    }
    this.votes.set(from, m.granted);
    const outcome = tallyVotes(this.voters, this.votes);
    switch (outcome) {
      case 'won':
        if (this.role === 'pre-candidate') this.campaign('election', 'pre-vote-won');
        else this.becomeLeader();
        return;
      case 'lost':
        this.becomeFollower(this.currentTerm, undefined,
          this.role === 'pre-candidate' ? 'pre-vote-lost' : 'election-lost');
        return;
      case 'pending':
        return;
      default:
        assertNever(outcome, 'vote outcome');
    }
  }

  private tickElection(): void {
    if (!this.canCampaign() || this.nowMs < this.electionDeadlineMs) return;
    const reason = this.role === 'follower' && this.leaderResetSeen()
      ? 'leader-link-reset'
      : 'election-timeout';
    this.campaign(this.preVoteOn ? 'pre-vote' : 'election', reason);
  }

  private campaign(kind: 'pre-vote' | 'election', reason: RoleChangeReason,
    transfer = false): void {
    const before = this.role;
    if (kind === 'pre-vote') {
      // Thesis §9.6: ask first, without raising the term or voting.
      this.role = 'pre-candidate';
    } else {
      this.setTerm(toTerm(this.currentTerm + 1), 'election-started');
      this.vote = this.id;
      this.role = 'candidate';
    }
    this.setLeader(undefined);
    this.progress.clear();
    this.votes = new Map([[this.id, true]]);
    this.resetElectionTimer();
    if (before !== this.role) this.emitRoleChange(before, reason);
    if (tallyVotes(this.voters, this.votes) === 'won') {
      if (kind === 'pre-vote') this.campaign('election', 'pre-vote-won');
      else this.becomeLeader();
      return;
    }
    const request = {
      term: kind === 'pre-vote' ? toTerm(this.currentTerm + 1) : this.currentTerm,
      lastLogIndex: this.log.lastIndex(),
      lastLogTerm: this.log.lastTerm(),
    };
    // Only voters are asked: a learner's answer would not count.
    for (const peer of this.voters) {
      if (peer === this.id) continue;
      if (kind === 'pre-vote') this.send(peer, { kind: 'pre-vote', ...request });
      else this.send(peer, transfer ? { kind: 'vote', ...request, transfer } : { kind: 'vote', ...request });
    }
  }

  private becomeLeader(): void {
    assert(this.role === 'candidate', () => `becomeLeader from ${this.role}`);
    assert(this.leaderOfTerm === undefined || this.leaderOfTerm === this.id,
      () => `${this.id} elected in term ${this.currentTerm}, led by ${this.leaderOfTerm}`);
    this.role = 'leader';
    this.setLeader(this.id);
    this.votes = new Map();
    this.readRounds = new ReadRounds();
    this.transferredInTerm = false;
    this.readLeaseUntilMs = Number.NEGATIVE_INFINITY;
    const next = logIndex(this.log.lastIndex() + 1);
    this.progress = new Map(this.peers.map((peer) =>
      [peer, new Progress(next, this.config.inflightMessagesMax, this.nowMs)]));
    this.heartbeatDeadlineMs = this.peers.length === 0
      ? Number.POSITIVE_INFINITY
      : this.nowMs + this.config.heartbeatIntervalMs;
    this.leaderLastIndexFloor = this.log.lastIndex();
    this.emitRoleChange('candidate', 'election-won');
    // Raft §8: a no-op of the new term lets entries of earlier terms commit (§5.4.2) now,
    // not at the next client write. MUTANT noNoopAtTermStart skips it.
    if (!this.mutants.noNoopAtTermStart) {
      this.log.append({ index: next, term: this.currentTerm, kind: 'noop', data: EMPTY_DATA });
    }
    this.maybeCommit();
  }

  /** The last config entry's membership is in force (thesis §4.1): voters, peers, progress. */
  private applyMembership(): void {
    const { voters, learners } = this.configLog.current();
    // A lease rests on the stickiness of the majority that granted it: not across a change.
    if (voters !== this.voters) this.readLeaseUntilMs = Number.NEGATIVE_INFINITY;
    this.voters = voters;
    this.peers = [...voters, ...learners].filter((id) => id !== this.id);
    if (this.role !== 'leader') return;
    const next = logIndex(this.log.lastIndex() + 1);
    for (const peer of this.peers) {
      if (!this.progress.has(peer)) {
        this.progress.set(peer, new Progress(next, this.config.inflightMessagesMax, this.nowMs));
      }
    }
    for (const id of [...this.progress.keys()]) {
      if (this.peers.includes(id)) continue;
      this.progress.delete(id);
      if (id === this.transferTarget) this.abortTransfer();
    }
    if (this.peers.length > 0 && this.heartbeatDeadlineMs === Number.POSITIVE_INFINITY) {
      this.heartbeatDeadlineMs = this.nowMs + this.config.heartbeatIntervalMs;
    }
  }

  /**
   * Thesis §4.2.2: a leader that is no longer a voter steps down once the change that removed
   * it is committed; it tells an up-to-date voter to campaign at once.
   */
  private maybeStepDownRemoved(): void {
    if (this.role !== 'leader' || this.voters.includes(this.id) ||
      this.configLog.latestIndex() > this.commitIndex) return;
    const successor = this.mostUpToDateVoter();
    if (successor !== undefined && this.progress.get(successor)?.matchIndex === this.log.lastIndex()) {
      this.send(successor, { kind: 'timeout-now', term: this.currentTerm });
    }
    this.becomeFollower(this.currentTerm, undefined, 'removed-from-cluster');
  }

  private becomeFollower(term: Term, leader: NodeId | undefined, reason: RoleChangeReason): void {
    const before = this.role;
    if (before === 'leader') this.failLeaderReads();
    if (term > this.currentTerm) this.setTerm(term, 'higher-term-seen');
    this.role = 'follower';
    this.transferTarget = undefined;
    this.transferDeadlineMs = Number.POSITIVE_INFINITY;
    this.progress.clear();
    this.votes = new Map();
    this.heartbeatDeadlineMs = Number.POSITIVE_INFINITY;
    this.setLeader(leader);
    this.resetElectionTimer();
    if (before !== 'follower') this.emitRoleChange(before, reason);
  }

  // ---------------------------------------------------------------------------------------
  // Follower side of replication (Raft §5.3)

  private stepFromLeader(from: NodeId, m: AppendRequest | HeartbeatRequest | SnapshotRequest): void {
    const refusal = this.leaderMessageRefusal(from, m);
    if (refusal !== undefined) {
      this.reject(from, m, refusal);
      return;
    }
    assert(this.role !== 'leader',
      () => `two leaders in term ${this.currentTerm}: ${this.id} and ${from}`);
    if (this.role !== 'follower') this.becomeFollower(this.currentTerm, from, 'leader-discovered');
    this.setLeader(from);
    this.leaderContactMs = this.nowMs;
    this.resetElectionTimer();
    if (m.kind === 'append') {
      this.stepAppend(from, m);
    } else if (m.kind === 'snapshot') {
      this.stepSnapshot(from, m);
    } else {
      // The leader sends min(its commit, our match); commit only what is proven to be the
      // leader's (Raft §5.3: commit follows the entries a message proves, not its say-so).
      this.commitTo(Math.min(m.commitIndex, this.leaderMatchIndex()));
      const response: HeartbeatResponse = m.readRound === undefined
        ? { kind: 'heartbeat-response', term: this.currentTerm }
        : { kind: 'heartbeat-response', term: this.currentTerm, readRound: m.readRound };
      this.send(from, response);
    }
  }

  private stepAppend(from: NodeId, m: AppendRequest): void {
    if (m.prevLogIndex < this.commitIndex) {
      // Committed entries match the leader's already: report the commit index as matched.
      this.sendAppendAck(from, this.commitIndex);
      return;
    }
    if (!this.log.matchTerm(m.prevLogIndex, m.prevLogTerm)) {
      // Fast back-off: point the leader at the last index that can still match.
      const hint = this.log.findConflictByTerm(
        Math.min(m.prevLogIndex, this.log.lastIndex()), m.prevLogTerm);
      this.send(from, { kind: 'append-response', term: this.currentTerm, success: false,
        index: m.prevLogIndex, hintIndex: hint.index, hintTerm: hint.term });
      return;
    }
    const lastNewIndex = logIndex(m.prevLogIndex + m.entries.length);
    const conflict = this.log.findConflict(m.entries);
    if (conflict !== undefined) {
      // leaderMessageRefusal dropped appends that would rewrite committed or proven entries.
      assert(conflict > this.leaderMatchIndex(),
        () => `append from ${from} would overwrite entry ${conflict} (commit index ` +
          `${this.commitIndex}, proven ${this.leaderMatchIndex()})`);
      const replacing = m.entries.slice(conflict - m.prevLogIndex - 1);
      this.log.truncateAndAppend(replacing);
      // Thesis §4.1: config entries hold from their append, and stop holding if cut off.
      this.configLog.truncateFrom(conflict);
      this.configLog.append(replacing);
      this.applyMembership();
    }
    this.noteProven(lastNewIndex);
    this.commitTo(Math.min(m.commitIndex, lastNewIndex));
    this.sendAppendAck(from, lastNewIndex);
  }

  /**
   * Why a leader's message of the current term is dropped (undefined: it is not), judged
   * before it changes anything (the sender is not even taken for the leader).
   */
  private leaderMessageRefusal(from: NodeId,
    m: AppendRequest | HeartbeatRequest | SnapshotRequest): RejectionReason | undefined {
    // Election Safety (Raft §5.2): a term has one leader; a second claimant is not a member.
    if (this.leaderOfTerm !== undefined && this.leaderOfTerm !== from) return 'second-leader';
    switch (m.kind) {
      case 'heartbeat':
        // The leader sends min(its commit, our match), and we acknowledged only what we hold.
        return m.commitIndex > this.log.lastIndex() ? 'commit-beyond-log' : undefined;
      case 'append':
        return this.appendContradiction(m);
      case 'snapshot':
        return this.snapshotRefusal(m);
      default:
        return assertNever(m, 'leader message kind');
    }
  }

  /**
   * An append naming another term than this log at an index where the leader's log must equal
   * it: up to the commit index (`below-commit`: Leader Completeness, §5.4), or up to what the
   * leader proved in this term (`contradicts-leader-log`: Leader Append-Only, §5.3).
   */
  private appendContradiction(m: AppendRequest): RejectionReason | undefined {
    const upTo = this.leaderMatchIndex();
    const differs = (index: number, term: number): boolean => {
      const ours = this.log.term(index);
      return index <= upTo && ours !== undefined && ours !== term;
    };
    let at = differs(m.prevLogIndex, m.prevLogTerm) ? m.prevLogIndex : undefined;
    for (let i = 0; at === undefined && i < m.entries.length; i++) {
      const e = m.entries[i]!;
      if (e.index > upTo) break;
      if (differs(e.index, e.term)) at = e.index;
    }
    if (at === undefined) return undefined;
    return at <= this.commitIndex ? 'below-commit' : 'contradicts-leader-log';
  }

  private snapshotRefusal(m: SnapshotRequest): RejectionReason | undefined {
    if (m.totalBytes > this.config.snapshotBytesMax) return 'snapshot-too-large';
    const { index, term } = m.meta;
    const ours = this.log.term(index);
    if (ours === undefined || ours === term) return undefined;
    if (index <= this.commitIndex) return 'below-commit';
    return index <= this.leaderMatchIndex() ? 'contradicts-leader-log' : undefined;
  }

  /**
   * The last index at which this log is known to equal the log of the current term's leader:
   * the commit index (Leader Completeness, §5.4), what the leader's appends of this term proved
   * (Log Matching, §5.3), and the last entry when it is of the current term (only that term's
   * leader makes such entries, and it never drops them in its term).
   */
  private leaderMatchIndex(): LogIndex {
    let index: number = this.commitIndex;
    if (this.provenTerm === this.currentTerm) index = Math.max(index, this.provenIndex);
    if (this.log.lastTerm() === this.currentTerm) index = Math.max(index, this.log.lastIndex());
    return logIndex(Math.min(index, this.log.lastIndex()));
  }

  /** The leader of the current term proved this log equal to its own up to `index`. */
  private noteProven(index: LogIndex): void {
    if (this.provenTerm !== this.currentTerm) {
      this.provenTerm = this.currentTerm;
      this.provenIndex = index;
    } else if (index > this.provenIndex) {
      this.provenIndex = index;
    }
  }

  private sendAppendAck(to: NodeId, index: LogIndex): void {
    const ack: AppendResponse = { kind: 'append-response', term: this.currentTerm, success: true,
      index, hintIndex: logIndex(0), hintTerm: toTerm(0) };
    // MUTANT ackBeforeSync: the ack leaves before the entries are durable.
    if (this.mutants.ackBeforeSync) this.messagesBeforePersist.push({ to, message: ack });
    else this.send(to, ack);
  }

  // ---------------------------------------------------------------------------------------
  // Leader side of replication

  private stepAppendResponse(from: NodeId, m: AppendResponse): void {
    const pr = this.progress.get(from);
    if (this.role !== 'leader' || pr === undefined) return;
    // This leader's log only grows in its term: no append it sent went past its last index.
    if (m.index > this.log.lastIndex()) {
      this.reject(from, m, 'ack-beyond-sent');
      return;
    }
    pr.lastContactMs = this.nowMs;
    if (!m.success) {
      // While a snapshot is under way, refusals answer older appends.
      if (pr.state === 'snapshot') return;
      // Fast back-off: skip every index whose term proves it cannot match (etcd's rule).
      const probeIndex = m.hintTerm > 0
        ? this.log.findConflictByTerm(Math.min(m.hintIndex, this.log.lastIndex()), m.hintTerm).index
        : m.hintIndex;
      if (pr.maybeDecreaseTo(m.index, probeIndex) && pr.state === 'replicate') pr.becomeProbe();
      return;
    }
    if (!pr.maybeUpdate(m.index)) return;
    if (pr.state === 'probe') pr.becomeReplicate();
    else if (pr.state === 'snapshot') {
      // Raft §7: the follower installed the snapshot (or already held its last entry).
      if (pr.matchIndex >= pr.pendingSnapshotIndex) pr.becomeReplicate();
    } else pr.inflights.freeTo(m.index);
    this.maybeCommit();
    if (from === this.transferTarget) this.maybeSendTimeoutNow(from);
  }

  private stepHeartbeatResponse(from: NodeId, m: HeartbeatResponse): void {
    const pr = this.progress.get(from);
    if (this.role !== 'leader' || pr === undefined) return;
    if (m.readRound !== undefined && m.readRound > this.readRounds.lastSentRound) {
      this.reject(from, m, 'ack-beyond-sent');
      return;
    }
    pr.lastContactMs = this.nowMs;
    if (m.readRound !== undefined && m.readRound > pr.readRoundAcked) {
      pr.readRoundAcked = m.readRound;
      this.maybeConfirmReads();
    }
    // The follower is reachable: allow the next probe (or an empty append that re-syncs it).
    pr.paused = false;
    // A lost timeout-now is sent again while the transfer lasts.
    if (from === this.transferTarget) this.maybeSendTimeoutNow(from);
  }

  // ---------------------------------------------------------------------------------------
  // Snapshots (Raft §7): InstallSnapshot in chunks, resumable, checksummed

  private setSnapshot(snapshot: Snapshot | undefined, checksum?: number): void {
    this.snapshot = snapshot;
    this.snapshotChecksum = snapshot === undefined ? 0 : checksum ?? crc32c(snapshot.data);
  }

  /**
   * One chunk from where the follower asked; the next waits for its answer. The snapshot is
   * the one this transfer started with, even when the leader has taken a newer one since.
   */
  private sendSnapshotChunk(peer: NodeId, pr: Progress): boolean {
    const underWay = pr.snapshotUnderWay;
    assert(underWay !== undefined, () => `leader ${this.id} sends ${peer} no snapshot`);
    const { snapshot, checksum } = underWay;
    const totalBytes = snapshot.data.length;
    const offsetBytes = Math.min(pr.snapshotOffsetBytes, totalBytes);
    const chunkBytesMax = Math.min(this.config.snapshotChunkBytesMax,
      this.config.bytesPerMessageMax);
    const end = Math.min(totalBytes, offsetBytes + chunkBytesMax);
    this.send(peer, { kind: 'snapshot', term: this.currentTerm, meta: snapshot.meta, totalBytes,
      checksum, offsetBytes, data: snapshot.data.subarray(offsetBytes, end) });
    pr.paused = true;
    return false;
  }

  private stepSnapshotResponse(from: NodeId, m: SnapshotResponse): void {
    const pr = this.progress.get(from);
    if (this.role !== 'leader' || pr === undefined) return;
    const underWay = pr.state === 'snapshot' ? pr.snapshotUnderWay : undefined;
    const sending = underWay !== undefined && m.snapshotIndex === pr.pendingSnapshotIndex;
    if (sending && m.nextOffsetBytes > underWay.snapshot.data.length) {
      this.reject(from, m, 'ack-beyond-sent');
      return;
    }
    pr.lastContactMs = this.nowMs;
    if (!sending) return;
    // Only an answer that moves the transfer sends a chunk: forward (the follower has the chunk
    // sent) or back (it lost what it had: a restart, a damaged whole). A repeat of the answer
    // already acted on (a chunk or answer duplicated, a chunk sent again after a heartbeat)
    // sends nothing, so extra copies in flight die out; answering every one with a chunk kept
    // them all in flight, one more per heartbeat, and multiplied them on a duplicating network.
    if (m.nextOffsetBytes === pr.snapshotOffsetBytes) return;
    pr.snapshotOffsetBytes = m.nextOffsetBytes;
    pr.paused = false;
  }

  /** Follower: a chunk of the leader's snapshot. */
  private stepSnapshot(from: NodeId, m: SnapshotRequest): void {
    const { meta } = m;
    if (meta.index <= this.commitIndex) {
      // Already committed here: the follower's log matches the leader's up to its commit.
      this.snapshotAssembly = undefined;
      this.sendAppendAck(from, this.commitIndex);
      return;
    }
    if (this.log.matchTerm(meta.index, meta.term)) {
      // The log holds the snapshot's last entry: it is committed, nothing to install (as etcd).
      this.snapshotAssembly = undefined;
      this.noteProven(meta.index);
      this.commitTo(meta.index);
      this.sendAppendAck(from, meta.index);
      return;
    }
    const assembly = this.assemble(m);
    if (assembly === 'too-many-chunks') {
      this.snapshotAssembly = undefined;
      this.reject(from, m, 'snapshot-too-many-chunks');
      return;
    }
    if (assembly === undefined || assembly.receivedBytes < assembly.totalBytes) {
      this.sendSnapshotProgress(from, meta.index, assembly?.receivedBytes ?? 0);
      return;
    }
    this.snapshotAssembly = undefined;
    const data = concatenate(assembly.chunks, assembly.totalBytes);
    if (crc32c(data) !== m.checksum) {
      this.sendSnapshotProgress(from, meta.index, 0); // damaged on the way: start again
      return;
    }
    this.installSnapshot({ meta, data });
    this.noteProven(meta.index);
    this.sendAppendAck(from, meta.index);
  }

  /**
   * Adds the chunk if it is the next one expected; returns the assembly as it stands, or
   * undefined when the chunk belongs to a snapshot not started here (ask for byte 0), or
   * `too-many-chunks` when it would be chunk snapshotChunksMax + 1.
   */
  private assemble(m: SnapshotRequest): SnapshotAssembly | undefined | 'too-many-chunks' {
    let assembly = this.snapshotAssembly;
    const same = assembly !== undefined && assembly.index === m.meta.index &&
      assembly.term === m.meta.term && assembly.checksum === m.checksum &&
      assembly.totalBytes === m.totalBytes;
    if (assembly === undefined || !same) {
      if (m.offsetBytes !== 0) return undefined;
      assembly = { index: m.meta.index, term: m.meta.term, checksum: m.checksum,
        totalBytes: m.totalBytes, chunks: [], receivedBytes: 0 };
      this.snapshotAssembly = assembly;
    }
    // A duplicate or a chunk after a lost one: the answer names the byte to resume from.
    if (m.offsetBytes === assembly.receivedBytes) {
      if (assembly.chunks.length >= this.config.snapshotChunksMax) return 'too-many-chunks';
      assembly.chunks.push(m.data);
      assembly.receivedBytes += m.data.length;
    }
    return assembly;
  }

  private sendSnapshotProgress(to: NodeId, snapshotIndex: LogIndex, nextOffsetBytes: number): void {
    this.send(to, { kind: 'snapshot-response', term: this.currentTerm, snapshotIndex,
      nextOffsetBytes });
  }

  /** Raft §7: the snapshot replaces the whole log; the runtime persists and restores it. */
  private installSnapshot(snapshot: Snapshot): void {
    const { index, term } = snapshot.meta;
    this.log.restore(index, term);
    this.configLog.restore(index, snapshot.meta.membership);
    this.applyMembership();
    this.setSnapshot(snapshot);
    this.pendingSnapshot = snapshot;
    this.commitIndex = index;
    this.applyingIndex = index;
  }

  /** The membership in force at `index` (for a snapshot taken there). */
  private membershipAt(index: LogIndex): Membership {
    return this.configLog.at(index);
  }

  // ---------------------------------------------------------------------------------------
  // Leadership transfer (Raft thesis §3.10)

  /** Sends `timeout-now` once the target's log matches ours (it could not win otherwise). */
  private maybeSendTimeoutNow(target: NodeId): void {
    const pr = this.progress.get(target);
    if (pr === undefined || pr.matchIndex !== this.log.lastIndex()) return;
    this.send(target, { kind: 'timeout-now', term: this.currentTerm });
    this.events.push({ kind: 'leadership-transfer', term: this.currentTerm, target,
      stage: 'timeout-now-sent' });
  }

  private abortTransfer(): void {
    const target = this.transferTarget;
    if (target === undefined) return;
    this.transferTarget = undefined;
    this.transferDeadlineMs = Number.POSITIVE_INFINITY;
    this.events.push({ kind: 'leadership-transfer', term: this.currentTerm, target,
      stage: 'aborted' });
  }

  /** The voter (not this node) whose log matches ours furthest; ties: heard from last. */
  private mostUpToDateVoter(): NodeId | undefined {
    let best: NodeId | undefined;
    let bestPr: Progress | undefined;
    for (const peer of this.voters) {
      const pr = this.progress.get(peer);
      if (pr === undefined) continue;
      if (bestPr === undefined || pr.matchIndex > bestPr.matchIndex ||
        (pr.matchIndex === bestPr.matchIndex && pr.lastContactMs > bestPr.lastContactMs)) {
        best = peer;
        bestPr = pr;
      }
    }
    return best;
  }

  /** A `timeout-now` from the leader of this term: campaign now (thesis §3.10). */
  private stepTimeoutNow(from: NodeId, m: RaftMessage): void {
    if (this.leaderOfTerm !== undefined && this.leaderOfTerm !== from) {
      this.reject(from, m, 'second-leader');
      return;
    }
    if (this.role === 'leader' || !this.canCampaign() || from !== this.leaderId) return;
    this.campaign('election', 'leadership-transfer', true);
  }

  /** Raft §5.3, §5.4.2: commit the highest index stored on a majority, if of this term. */
  private maybeCommit(): void {
    const matches = this.voters.map((v) => v === this.id
      ? this.log.getStableIndex()
      : (this.progress.get(v)?.matchIndex ?? 0));
    const index = majorityValue(matches);
    if (index <= this.commitIndex) return;
    // Raft §5.4.2 (Figure 8): only entries of the current term commit by counting replicas.
    // MUTANT commitPreviousTermByCount commits older entries by counting too.
    if (this.log.term(index) !== this.currentTerm && !this.mutants.commitPreviousTermByCount) {
      return;
    }
    this.commitTo(index);
    // Thesis §6.4 step 1: reads that came before the first commit of this term may go on.
    if (this.committedInTerm()) {
      for (const read of this.readRounds.takeEarly()) this.admitRead(read.requestId, read.from);
    }
    this.maybeStepDownRemoved();
  }

  /** Whether some follower's flow control allows an append now. */
  private replicationPending(): boolean {
    if (this.role !== 'leader') return false;
    const lastIndex = this.log.lastIndex();
    for (const pr of this.progress.values()) {
      if (pr.shouldSendAppend(lastIndex, this.commitIndex)) return true;
    }
    return false;
  }

  /** Sends what each follower's flow control allows (batched: called when a Ready is built). */
  private flushReplication(): void {
    if (this.role !== 'leader') return;
    for (const peer of this.peers) {
      const pr = this.progress.get(peer);
      assert(pr !== undefined, () => `leader ${this.id} has no progress for ${peer}`);
      while (this.maybeSendAppend(peer, pr)) { /* pipelined until the window is full */ }
    }
  }

  private maybeSendAppend(peer: NodeId, pr: Progress): boolean {
    const lastIndex = this.log.lastIndex();
    if (!pr.shouldSendAppend(lastIndex, this.commitIndex)) return false;
    if (pr.state === 'snapshot') return this.sendSnapshotChunk(peer, pr);
    const prevLogIndex = logIndex(pr.nextIndex - 1);
    const prevLogTerm = this.log.term(prevLogIndex);
    if (prevLogTerm === undefined) {
      // Raft §7: the entries this follower needs were compacted away: send the snapshot.
      assert(this.snapshot !== undefined && this.snapshot.meta.index >= this.log.getBaseIndex(),
        () => `leader ${this.id} compacted to ${this.log.getBaseIndex()} without a snapshot`);
      pr.becomeSnapshot({ snapshot: this.snapshot, checksum: this.snapshotChecksum });
      return this.sendSnapshotChunk(peer, pr);
    }
    const entries = pr.canSendEntries(lastIndex)
      ? this.log.sliceForMessage(pr.nextIndex, this.config.entriesPerMessageMax,
        this.config.bytesPerMessageMax)
      : [];
    this.send(peer, { kind: 'append', term: this.currentTerm, prevLogIndex, prevLogTerm, entries,
      commitIndex: this.commitIndex });
    pr.sentAppend(entries.length, prevLogIndex + entries.length, this.commitIndex);
    return true;
  }

  private tickLeader(): void {
    // Check-quorum (thesis §9.6): a leader cut off from a majority steps down by itself.
    if (this.checkQuorumOn && this.nowMs >= this.quorumContactDeadlineMs()) {
      this.becomeFollower(this.currentTerm, undefined, 'check-quorum-lost');
      return;
    }
    // Thesis §3.10: a transfer that did not produce a new leader within an election timeout
    // is abandoned, and this leader takes proposals again.
    if (this.nowMs >= this.transferDeadlineMs) this.abortTransfer();
    if (this.nowMs < this.heartbeatDeadlineMs) return;
    this.broadcastHeartbeat();
  }

  /** One heartbeat to every follower: one numbered round (ReadIndex confirmation, leases). */
  private broadcastHeartbeat(): void {
    this.heartbeatDeadlineMs = this.peers.length === 0
      ? Number.POSITIVE_INFINITY
      : this.nowMs + this.config.heartbeatIntervalMs;
    const readRound = this.readRounds.startRound(this.nowMs);
    for (const peer of this.peers) {
      const pr = this.progress.get(peer);
      assert(pr !== undefined, () => `leader ${this.id} has no progress for ${peer}`);
      // Never more than the follower's match: it may not hold our entries beyond it.
      this.send(peer, { kind: 'heartbeat', term: this.currentTerm,
        commitIndex: logIndex(Math.min(pr.matchIndex, this.commitIndex)), readRound });
    }
    // A lone voter confirms its own rounds.
    this.maybeConfirmReads();
  }

  // ---------------------------------------------------------------------------------------
  // Linearizable reads (Raft thesis §6.4 ReadIndex; §6.4.1 leases)

  /** A read at the leader (its own, or forwarded `from` a follower). False when full. */
  private leaderRead(requestId: string, from: NodeId | undefined): boolean {
    if (this.readRounds.size >= this.config.pendingReadsMax) return false;
    // Thesis §6.4 step 1: until an entry of its term commits, this leader's commit index may
    // lag the last leader's: hold the read.
    if (!this.committedInTerm()) this.readRounds.addEarly(requestId, from);
    else this.admitRead(requestId, from);
    return true;
  }

  /** Step 2 onwards: record the commit index; confirm by a round, or by the lease. */
  private admitRead(requestId: string, from: NodeId | undefined): void {
    if (this.leaseHolds()) this.releaseRead(requestId, from, this.commitIndex);
    else this.readRounds.add(requestId, from, this.commitIndex);
  }

  private releaseRead(requestId: string, from: NodeId | undefined, index: LogIndex): void {
    if (from === undefined) this.readStates.push({ requestId, index });
    else this.send(from, { kind: 'read-index-response', term: this.currentTerm, requestId,
      success: true, index });
  }

  private refuseRead(to: NodeId, requestId: string): void {
    this.send(to, { kind: 'read-index-response', term: this.currentTerm, requestId,
      success: false, index: logIndex(0) });
  }

  /** Releases the reads of every round a majority of voters has answered. */
  private maybeConfirmReads(): void {
    const acked = this.voters.map((v) => v === this.id
      ? this.readRounds.lastSentRound
      : (this.progress.get(v)?.readRoundAcked ?? 0));
    const { reads, sentAtMs } = this.readRounds.confirm(majorityValue(acked));
    if (sentAtMs !== undefined && this.leaseAllowed()) {
      const rho = this.config.clockRateErrorMax;
      const leaseMs = this.config.electionTimeoutMsMin * (1 - rho) / (1 + rho);
      this.readLeaseUntilMs = Math.max(this.readLeaseUntilMs, sentAtMs + leaseMs);
    }
    for (const read of reads) this.releaseRead(read.requestId, read.from, read.index);
  }

  /** Lease reads need the stickiness of check-quorum, and no transfer in this term. */
  private leaseAllowed(): boolean {
    return this.config.leaseBasedReads && this.checkQuorumOn && this.stickinessOn &&
      !this.transferredInTerm;
  }

  private leaseHolds(): boolean {
    return this.leaseAllowed() && this.nowMs < this.readLeaseUntilMs;
  }

  private committedInTerm(): boolean {
    return this.log.term(this.commitIndex) === this.currentTerm;
  }

  /** Leadership ends: every read it held fails (forwarded ones are refused to the follower). */
  private failLeaderReads(): void {
    for (const read of this.readRounds.clear()) {
      if (read.from === undefined) {
        this.readsFailed.push({ requestId: read.requestId, reason: 'leadership-lost' });
      } else {
        this.refuseRead(read.from, read.requestId);
      }
    }
    this.readLeaseUntilMs = Number.NEGATIVE_INFINITY;
  }

  /** A follower's forwarded read, in this term. */
  private stepReadIndex(from: NodeId, requestId: string): void {
    if (this.role !== 'leader' || !this.leaderRead(requestId, from)) {
      this.refuseRead(from, requestId);
    }
  }

  private stepReadIndexResponse(from: NodeId, m: ReadIndexResponse): void {
    if (this.forwardedReads.get(m.requestId) !== from) return;
    this.forwardedReads.delete(m.requestId);
    if (m.success) this.readStates.push({ requestId: m.requestId, index: m.index });
    else this.readsFailed.push({ requestId: m.requestId, reason: 'refused' });
  }

  /** The instant at which a majority (this node included) will have been silent too long. */
  private quorumContactDeadlineMs(): number {
    const contacts = this.voters.map((v) => v === this.id
      ? Number.POSITIVE_INFINITY
      : (this.progress.get(v)?.lastContactMs ?? Number.NEGATIVE_INFINITY));
    return majorityValue(contacts) + this.config.electionTimeoutMsMin;
  }

  // ---------------------------------------------------------------------------------------
  // State helpers

  private commitTo(index: number): void {
    if (index <= this.commitIndex) return;
    assert(index <= this.log.lastIndex(),
      () => `commit ${index} past last index ${this.log.lastIndex()}`);
    this.commitIndex = logIndex(index);
  }

  private setTerm(term: Term, reason: TermChangeReason): void {
    assert(term > this.currentTerm, () => `term ${term} does not exceed ${this.currentTerm}`);
    this.events.push({ kind: 'term-changed', from: this.currentTerm, to: term, reason });
    this.currentTerm = term;
    this.vote = undefined;
    this.voteHiddenFromStorage = false;
    this.leaderOfTerm = undefined;
  }

  private setLeader(leader: NodeId | undefined): void {
    if (leader !== undefined) {
      // Election Safety as this node sees it: one leader per term.
      assert(this.leaderOfTerm === undefined || this.leaderOfTerm === leader,
        () => `term ${this.currentTerm} has two leaders: ${this.leaderOfTerm} and ${leader}`);
      this.leaderOfTerm = leader;
    }
    if (leader === this.leaderId) return;
    this.events.push({ kind: 'leader-changed', term: this.currentTerm, leaderId: leader,
      previousLeaderId: this.leaderId });
    this.leaderId = leader;
    // Reads forwarded to the previous leader may never be answered: fail them now.
    for (const requestId of this.forwardedReads.keys()) {
      this.readsFailed.push({ requestId, reason: 'leader-changed' });
    }
    this.forwardedReads.clear();
  }

  private emitRoleChange(from: RaftRole, reason: RoleChangeReason): void {
    this.events.push({ kind: 'role-changed', term: this.currentTerm, from, to: this.role,
      reason });
  }

  private resetElectionTimer(): void {
    const { electionTimeoutMsMin: min, electionTimeoutMsMax: max } = this.config;
    this.electionDeadlineMs = this.nowMs + randomInt(this.random, min, max);
  }

  private promotable(): boolean {
    return this.voters.includes(this.id);
  }

  /** A voter campaigns for term + 1, which must not pass TERM_MAX. */
  private canCampaign(): boolean {
    return this.promotable() && this.currentTerm < TERM_MAX;
  }

  private send(to: NodeId, message: RaftMessage): void {
    this.messages.push({ to, message });
  }

  private advanceTime(nowMs: number): void {
    assert(Number.isFinite(nowMs) && nowMs >= this.nowMs,
      () => `time went backwards or is not finite: ${nowMs} after ${this.nowMs}`);
    this.nowMs = nowMs;
  }

  private hardStateForStorage(): HardState {
    return { term: this.currentTerm, vote: this.voteHiddenFromStorage ? undefined : this.vote,
      commitIndex: this.commitIndex };
  }

  /** Field by field: `hasReady` runs after every input, so it allocates nothing. */
  private hardStateChanged(): boolean {
    const stored = this.readyHardState;
    return this.currentTerm !== stored.term || this.commitIndex !== stored.commitIndex ||
      (this.voteHiddenFromStorage ? undefined : this.vote) !== stored.vote;
  }

  private softStateChanged(): boolean {
    const last = this.readySoftState;
    return this.role !== last.role || this.currentTerm !== last.term ||
      this.leaderId !== last.leaderId;
  }

  private softState(): SoftState {
    return { role: this.role, term: this.currentTerm, leaderId: this.leaderId };
  }

  /** Invariants that hold after every input; a failure is a bug (or a planted mutant). */
  private checkInvariants(): void {
    const last = this.log.lastIndex();
    assert(this.commitIndex >= this.checkedCommitIndex,
      () => `commit index went back from ${this.checkedCommitIndex} to ${this.commitIndex}`);
    assert(this.currentTerm >= this.checkedTerm,
      () => `term went back from ${this.checkedTerm} to ${this.currentTerm}`);
    assert(this.commitIndex <= last, () => `commit ${this.commitIndex} past last index ${last}`);
    assert(this.appliedIndex <= this.applyingIndex && this.applyingIndex <= this.commitIndex,
      () => `applied ${this.appliedIndex} / applying ${this.applyingIndex} / commit ` +
        `${this.commitIndex} out of order`);
    assert(this.log.lastTerm() <= this.currentTerm,
      () => `last log term ${this.log.lastTerm()} above current term ${this.currentTerm}`);
    // Raft §7: only what a snapshot covers leaves the log.
    assert(this.log.getBaseIndex() === 0 ||
      (this.snapshot !== undefined && this.snapshot.meta.index >= this.log.getBaseIndex()),
    () => `log compacted to ${this.log.getBaseIndex()} beyond the snapshot`);
    this.checkedCommitIndex = this.commitIndex;
    this.checkedTerm = this.currentTerm;
    if (this.role === 'leader') this.checkLeaderInvariants(last);
  }

  private checkLeaderInvariants(last: LogIndex): void {
    assert(this.leaderId === this.id && this.leaderOfTerm === this.id && this.vote === this.id,
      () => `leader ${this.id} of term ${this.currentTerm} sees leader ${this.leaderId}, ` +
        `vote ${this.vote}`);
    // Raft §5.3 Leader Append-Only: a leader never truncates its own log.
    assert(last >= this.leaderLastIndexFloor,
      () => `leader log shrank from ${this.leaderLastIndexFloor} to ${last}`);
    this.leaderLastIndexFloor = last;
    assert(this.transferTarget === undefined || this.progress.has(this.transferTarget),
      () => `leader ${this.id} transfers to ${this.transferTarget}, which it does not track`);
    // Runs after every input: no [key, value] pairs, and a message closure only on failure.
    this.progress.forEach((pr, peer) => {
      if (pr.matchIndex <= last && pr.matchIndex < pr.nextIndex && pr.nextIndex <= last + 1) return;
      assert(false, () => `progress of ${peer}: match ${pr.matchIndex} next ${pr.nextIndex} ` +
        `last ${last}`);
    });
  }
}

/** A snapshot being received: chunks so far, in order, and what the whole must match. */
interface SnapshotAssembly {
  readonly index: LogIndex;
  readonly term: Term;
  readonly checksum: number;
  readonly totalBytes: number;
  readonly chunks: Uint8Array[];
  receivedBytes: number;
}

function concatenate(chunks: readonly Uint8Array[], totalBytes: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.length === totalBytes) return chunks[0]!;
  const out = new Uint8Array(totalBytes);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** Messages only a leader sends, which depend on nothing but its (already durable) term. */
function fromLeaderOnly(message: RaftMessage): boolean {
  switch (message.kind) {
    case 'append':
    case 'heartbeat':
    case 'snapshot':
    case 'timeout-now':
      return true;
    case 'append-response':
    case 'heartbeat-response':
    case 'snapshot-response':
    case 'pre-vote':
    case 'pre-vote-response':
    case 'vote':
    case 'vote-response':
    case 'read-index':
    case 'read-index-response':
      return false;
    default:
      return assertNever(message, 'raft message kind');
  }
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commitIndex === b.commitIndex;
}

function sameSoftState(a: SoftState, b: SoftState): boolean {
  return a.role === b.role && a.term === b.term && a.leaderId === b.leaderId;
}
