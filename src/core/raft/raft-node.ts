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
import type { Random } from '../random.js';
import { randomInt } from '../random.js';
import type { RaftConfig, RaftMutants } from './config.js';
import { formatConfigProblems } from '../config.js';
import { validateRaftConfig } from './config.js';
import { entrySizeBytes, RaftLog } from './log.js';
import type {
  AppendRequest, AppendResponse, HeartbeatRequest, PreVoteRequest, PreVoteResponse,
  RaftEnvelope, RaftMessage, VoteRequest, VoteResponse,
} from './messages.js';
import { Progress } from './progress.js';
import { majorityValue, tallyVotes } from './quorum.js';
import type {
  PeerProgressStatus, ProposeResult, RaftEvent, RaftRole, RaftStatus, Ready,
  RoleChangeReason, SoftState, TermChangeReason,
} from './ready.js';
import type { Entry, HardState, RaftDurableState } from './types.js';

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
 * consecutive from 1 or whose terms decrease, or a commit index past the last entry (committed
 * entries were lost). The runtime checks this first to refuse to start with a clear message.
 * (A last entry whose term is above the stored term is fine: a torn write kept the entries but
 * not the hard state written after them; the node adopts that term.)
 */
export function checkRaftDurableState(state: RaftDurableState): string[] {
  const problems: string[] = [];
  const { hardState, entries } = state;
  const lastIndex = entries.length === 0 ? 0 : (entries[entries.length - 1] as Entry).index;
  entries.forEach((e, i) => {
    if (e.index !== i + 1) problems.push(`entry ${i} has index ${e.index}, expected ${i + 1}`);
    const previous = i === 0 ? 0 : (entries[i - 1] as Entry).term;
    if (e.term < previous) problems.push(`entry ${e.index} has term ${e.term} < ${previous}`);
  });
  if (hardState.commitIndex > lastIndex) {
    problems.push(`commit index ${hardState.commitIndex} is past the last entry ${lastIndex}`);
  }
  return problems;
}

export class RaftNode {
  private readonly config: RaftConfig;
  private readonly id: NodeId;
  private readonly peers: readonly NodeId[];
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
  private nowMs: number;
  private electionDeadlineMs = 0;
  /** When this node last heard from its leader (leader stickiness). */
  private leaderContactMs = Number.NEGATIVE_INFINITY;
  private heartbeatDeadlineMs = Number.POSITIVE_INFINITY;
  /** (Pre-)vote answers in the current campaign, this node's own included. */
  private votes = new Map<NodeId, boolean>();
  private progress = new Map<NodeId, Progress>();
  /** Mutant voteNotPersisted: the vote of this term is kept out of hardState. */
  private voteHiddenFromStorage = false;

  // Ready bookkeeping.
  private messages: RaftEnvelope[] = [];
  private messagesBeforePersist: RaftEnvelope[] = [];
  private events: RaftEvent[] = [];
  private readyHardState: HardState;
  private readySoftState: SoftState;
  /** Committed entries up to here were handed out in a Ready. */
  private applyingIndex: LogIndex;
  /** Committed entries up to here were applied (their Ready advanced). */
  private appliedIndex: LogIndex;
  private outstanding: Ready | undefined = undefined;

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
    this.peers = config.voters.filter((v) => v !== config.id);
    this.random = random;
    this.mutants = config.mutants;
    // MUTANT preVoteWithoutCheckQuorum: pre-vote on, check-quorum and stickiness off.
    const mutantNoCheckQuorum = config.mutants.preVoteWithoutCheckQuorum;
    this.preVoteOn = config.preVote || mutantNoCheckQuorum;
    this.checkQuorumOn = config.checkQuorum && !mutantNoCheckQuorum;
    this.stickinessOn = (config.checkQuorum || config.preVote) && !mutantNoCheckQuorum;
    this.log = new RaftLog(state.entries);
    this.currentTerm = state.hardState.term;
    this.vote = state.hardState.vote;
    if (this.log.lastTerm() > this.currentTerm) {
      // Entries outlived the hard state stored after them. Nothing was sent on their account
      // (messages wait for the sync), so taking their term with no vote is safe; the first
      // Ready persists it.
      this.currentTerm = this.log.lastTerm();
      this.vote = undefined;
    }
    this.commitIndex = state.hardState.commitIndex;
    this.nowMs = nowMs;
    this.readyHardState = state.hardState;
    this.readySoftState = this.softState();
    this.applyingIndex = logIndex(0);
    this.appliedIndex = logIndex(0);
    this.checkedCommitIndex = this.commitIndex;
    this.checkedTerm = this.currentTerm;
    this.resetElectionTimer();
  }

  // ---------------------------------------------------------------------------------------
  // Inputs

  /**
   * A message from `from`. Messages from nodes that are not voters, or from this node, are
   * ignored. The message must have passed `validateRaftMessage` (or come from a RaftNode).
   */
  step(from: NodeId, message: RaftMessage, nowMs: number): void {
    this.advanceTime(nowMs);
    if (from !== this.id && this.config.voters.includes(from)) this.stepMessage(from, message);
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
   * The next instant at which `tick` has work (election timeout, heartbeat, check-quorum):
   * a runtime sets one timer for it. `Infinity` when nothing is scheduled. Changes after every
   * input, so read it again after each `step`, `tick`, `propose` or `advance`.
   */
  nextDeadlineMs(): number {
    if (this.role === 'leader') {
      return Math.min(this.heartbeatDeadlineMs,
        this.checkQuorumOn ? this.quorumContactDeadlineMs() : Number.POSITIVE_INFINITY);
    }
    return this.promotable() ? this.electionDeadlineMs : Number.POSITIVE_INFINITY;
  }

  // ---------------------------------------------------------------------------------------
  // Outputs

  /**
   * Whether `ready()` has work. False while a Ready is outstanding (handed out, not yet
   * advanced). No side effects: calling it after every input does not break batching.
   */
  hasReady(): boolean {
    if (this.outstanding !== undefined) return false;
    return this.replicationPending() ||
      this.messages.length > 0 || this.messagesBeforePersist.length > 0 ||
      this.events.length > 0 || this.log.hasUnpersisted() ||
      this.commitIndex > this.applyingIndex || this.hardStateChanged() ||
      !sameSoftState(this.softState(), this.readySoftState);
  }

  /** The next batch of work; see {@link Ready} for what to do with it, in which order. */
  ready(): Ready {
    assert(this.outstanding === undefined, 'ready() called before advance() of the previous one');
    this.flushReplication();
    const hardState = this.hardStateForStorage();
    const hardStateChanged = !sameHardState(hardState, this.readyHardState);
    const softState = this.softState();
    const entries = this.log.unpersisted();
    const ready: Ready = {
      softState: sameSoftState(softState, this.readySoftState) ? undefined : softState,
      hardState: hardStateChanged ? hardState : undefined,
      entries,
      mustSync: entries.length > 0 || hardState.term !== this.readyHardState.term ||
        hardState.vote !== this.readyHardState.vote,
      messagesBeforePersist: this.messagesBeforePersist,
      messages: this.messages,
      committedEntries: this.log.slice(this.applyingIndex + 1, this.commitIndex),
      events: this.events,
    };
    this.log.markPersistRequested();
    this.readyHardState = hardState;
    this.readySoftState = softState;
    this.applyingIndex = this.commitIndex;
    this.messages = [];
    this.messagesBeforePersist = [];
    this.events = [];
    this.outstanding = ready;
    return ready;
  }

  /**
   * The runtime has persisted, sent and applied `ready` (the object `ready()` returned last).
   * A leader counts its own entries towards commit only from here: they are durable now.
   */
  advance(ready: Ready): void {
    assert(ready === this.outstanding, 'advance() of a Ready that is not the outstanding one');
    const lastEntry = ready.entries[ready.entries.length - 1];
    if (lastEntry !== undefined) this.log.stableTo(lastEntry.index, lastEntry.term);
    const lastApplied = ready.committedEntries[ready.committedEntries.length - 1];
    if (lastApplied !== undefined) this.appliedIndex = lastApplied.index;
    this.outstanding = undefined;
    if (this.role === 'leader') this.maybeCommit();
    this.checkInvariants();
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
      stableIndex: this.log.getStableIndex(), progress,
    };
  }

  /** The log entry at `index` (for tests and the runtime's reads), or undefined. */
  entry(index: LogIndex): Entry | undefined {
    return this.log.term(index) === undefined || index === 0 ? undefined : this.log.entryAt(index);
  }

  // ---------------------------------------------------------------------------------------
  // Message dispatch and the generation clock (Raft §5.1)

  private stepMessage(from: NodeId, m: RaftMessage): void {
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
        this.stepFromLeader(from, m);
        return;
      case 'append-response':
        this.stepAppendResponse(from, m);
        return;
      case 'heartbeat-response':
        this.stepHeartbeatResponse(from);
        return;
      default:
        assertNever(m, 'raft message kind');
    }
  }

  /** A message from a higher term. Returns false when it is to be ignored. */
  private stepHigherTerm(from: NodeId, m: RaftMessage): boolean {
    if (m.kind === 'pre-vote' || m.kind === 'vote') {
      // Leader stickiness (thesis §9.6): while this node hears from a live leader it neither
      // raises its term nor votes, so a disruptive node cannot depose a healthy leader.
      if (this.inLeaderLease()) return false;
      // A pre-vote never changes the receiver's term: it is only a question.
      if (m.kind === 'pre-vote') return true;
    }
    // A granted pre-vote carries the term this node proposed, not a term seen elsewhere.
    if (m.kind === 'pre-vote-response' && m.granted) return true;
    const leader = m.kind === 'append' || m.kind === 'heartbeat' ? from : undefined;
    this.becomeFollower(m.term, leader, 'higher-term-seen');
    return true;
  }

  /** Raft §5.1: refuse a request of a lower term with the current term; drop stale answers. */
  private stepLowerTerm(from: NodeId, m: RaftMessage): void {
    const term = this.currentTerm;
    switch (m.kind) {
      case 'append':
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
      case 'pre-vote-response':
      case 'vote-response':
      case 'append-response':
      case 'heartbeat-response':
        return;
      default:
        assertNever(m, 'raft message kind');
    }
  }

  /**
   * Whether this node believes in a live leader (itself included), so ignores (pre-)votes of a
   * higher term. Leadership transfer will add a forced vote that bypasses this.
   */
  private inLeaderLease(): boolean {
    if (this.role === 'leader') return this.checkQuorumOn;
    return this.stickinessOn && this.leaderId !== undefined &&
      this.nowMs - this.leaderContactMs < this.config.electionTimeoutMsMin;
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
    const outcome = tallyVotes(this.config.voters, this.votes);
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
    if (!this.promotable() || this.nowMs < this.electionDeadlineMs) return;
    this.campaign(this.preVoteOn ? 'pre-vote' : 'election', 'election-timeout');
  }

  private campaign(kind: 'pre-vote' | 'election', reason: RoleChangeReason): void {
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
    if (tallyVotes(this.config.voters, this.votes) === 'won') {
      if (kind === 'pre-vote') this.campaign('election', 'pre-vote-won');
      else this.becomeLeader();
      return;
    }
    const request = {
      term: kind === 'pre-vote' ? toTerm(this.currentTerm + 1) : this.currentTerm,
      lastLogIndex: this.log.lastIndex(),
      lastLogTerm: this.log.lastTerm(),
    };
    for (const peer of this.peers) {
      this.send(peer, { kind: kind === 'pre-vote' ? 'pre-vote' : 'vote', ...request });
    }
  }

  private becomeLeader(): void {
    assert(this.role === 'candidate', () => `becomeLeader from ${this.role}`);
    assert(this.leaderOfTerm === undefined || this.leaderOfTerm === this.id,
      () => `${this.id} elected in term ${this.currentTerm}, led by ${this.leaderOfTerm}`);
    this.role = 'leader';
    this.setLeader(this.id);
    this.votes = new Map();
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

  private becomeFollower(term: Term, leader: NodeId | undefined, reason: RoleChangeReason): void {
    const before = this.role;
    if (term > this.currentTerm) this.setTerm(term, 'higher-term-seen');
    this.role = 'follower';
    this.progress.clear();
    this.votes = new Map();
    this.heartbeatDeadlineMs = Number.POSITIVE_INFINITY;
    this.setLeader(leader);
    this.resetElectionTimer();
    if (before !== 'follower') this.emitRoleChange(before, reason);
  }

  // ---------------------------------------------------------------------------------------
  // Follower side of replication (Raft §5.3)

  private stepFromLeader(from: NodeId, m: AppendRequest | HeartbeatRequest): void {
    assert(this.role !== 'leader',
      () => `two leaders in term ${this.currentTerm}: ${this.id} and ${from}`);
    if (this.role !== 'follower') this.becomeFollower(this.currentTerm, from, 'leader-discovered');
    this.setLeader(from);
    this.leaderContactMs = this.nowMs;
    this.resetElectionTimer();
    if (m.kind === 'append') {
      this.stepAppend(from, m);
    } else {
      // The leader sends min(its commit, our match): our log holds that prefix, unless it was
      // lost with unsynced writes (a broken contract); never commit past what we hold.
      this.commitTo(Math.min(m.commitIndex, this.log.lastIndex()));
      this.send(from, { kind: 'heartbeat-response', term: this.currentTerm });
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
      assert(conflict > this.commitIndex,
        () => `append from ${from} would overwrite committed entry ${conflict} ` +
          `(commit index ${this.commitIndex})`);
      this.log.truncateAndAppend(m.entries.slice(conflict - m.prevLogIndex - 1));
    }
    this.commitTo(Math.min(m.commitIndex, lastNewIndex));
    this.sendAppendAck(from, lastNewIndex);
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
    pr.lastContactMs = this.nowMs;
    if (!m.success) {
      // Fast back-off: skip every index whose term proves it cannot match (etcd's rule).
      const probeIndex = m.hintTerm > 0
        ? this.log.findConflictByTerm(Math.min(m.hintIndex, this.log.lastIndex()), m.hintTerm).index
        : m.hintIndex;
      if (pr.maybeDecreaseTo(m.index, probeIndex) && pr.state === 'replicate') pr.becomeProbe();
      return;
    }
    if (m.index > this.log.lastIndex() || !pr.maybeUpdate(m.index)) return;
    if (pr.state === 'probe') pr.becomeReplicate();
    else pr.inflights.freeTo(m.index);
    this.maybeCommit();
  }

  private stepHeartbeatResponse(from: NodeId): void {
    const pr = this.progress.get(from);
    if (this.role !== 'leader' || pr === undefined) return;
    pr.lastContactMs = this.nowMs;
    // The follower is reachable: allow the next probe (or an empty append that re-syncs it).
    pr.paused = false;
  }

  /** Raft §5.3, §5.4.2: commit the highest index stored on a majority, if of this term. */
  private maybeCommit(): void {
    const matches = this.config.voters.map((v) => v === this.id
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
    const prevLogIndex = logIndex(pr.nextIndex - 1);
    const prevLogTerm = this.log.term(prevLogIndex);
    assert(prevLogTerm !== undefined, () => `no term for ${prevLogIndex} (snapshots come later)`);
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
    if (this.nowMs < this.heartbeatDeadlineMs) return;
    this.heartbeatDeadlineMs = this.nowMs + this.config.heartbeatIntervalMs;
    for (const peer of this.peers) {
      const pr = this.progress.get(peer);
      assert(pr !== undefined, () => `leader ${this.id} has no progress for ${peer}`);
      // Never more than the follower's match: it may not hold our entries beyond it.
      this.send(peer, { kind: 'heartbeat', term: this.currentTerm,
        commitIndex: logIndex(Math.min(pr.matchIndex, this.commitIndex)) });
    }
  }

  /** The instant at which a majority (this node included) will have been silent too long. */
  private quorumContactDeadlineMs(): number {
    const contacts = this.config.voters.map((v) => v === this.id
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
    return this.config.voters.includes(this.id);
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

  private hardStateChanged(): boolean {
    return !sameHardState(this.hardStateForStorage(), this.readyHardState);
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
    for (const [peer, pr] of this.progress) {
      assert(pr.matchIndex <= last && pr.matchIndex < pr.nextIndex && pr.nextIndex <= last + 1,
        () => `progress of ${peer}: match ${pr.matchIndex} next ${pr.nextIndex} last ${last}`);
    }
  }
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commitIndex === b.commitIndex;
}

function sameSoftState(a: SoftState, b: SoftState): boolean {
  return a.role === b.role && a.term === b.term && a.leaderId === b.leaderId;
}
