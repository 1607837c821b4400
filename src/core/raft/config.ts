/**
 * Raft configuration: every field with its meaning, unit, default and trade-off; two named
 * profiles; and `validateRaftConfig`, which reports every broken rule at once.
 */
import type { ConfigProblem } from '../config.js';
import type { NodeId } from '../ids.js';

/**
 * TEST-ONLY planted bugs. Each flag turns on one small, clearly marked branch in the core that
 * breaks a Raft rule, so the test suites and the simulator can prove that they detect it.
 * Production configs use {@link RAFT_NO_MUTANTS}; `validateRaftConfig` accepts mutants (the
 * simulator needs them) but nothing outside tests should ever set one.
 */
export interface RaftMutants {
  /** A new leader does not append a no-op entry at the start of its term (Raft §8). */
  readonly noNoopAtTermStart: boolean;
  /**
   * A granted vote is kept in memory only: `Ready.hardState` never carries it, so a restart in
   * the same term forgets it and the node may vote twice in one term (two leaders).
   */
  readonly voteNotPersisted: boolean;
  /**
   * Followers acknowledge appended entries before they are durable: successful append
   * responses go to `Ready.messagesBeforePersist`, which the runtime sends before persisting.
   */
  readonly ackBeforeSync: boolean;
  /**
   * The leader commits any entry stored on a majority, whatever its term (the Figure 8 bug;
   * Raft §5.4.2 allows counting replicas only for entries of the leader's current term).
   */
  readonly commitPreviousTermByCount: boolean;
  /** Pre-vote stays on but check-quorum and leader stickiness are off, whatever the config. */
  readonly preVoteWithoutCheckQuorum: boolean;
  /**
   * A leader proposes a membership change before it has committed an entry of its own term
   * (the single-server change bug found after the Raft thesis: a change of the previous
   * leader, still uncommitted, and this one can then form disjoint majorities).
   */
  readonly configChangeBeforeTermCommit: boolean;
  /**
   * Reads served locally without ReadIndex: `readIndex` answers at once with this node's own
   * commit index, whatever its role, with no heartbeat round and no forwarding (stale reads
   * from deposed leaders and lagging followers).
   */
  readonly readsWithoutReadIndex: boolean;
  /**
   * A message's term is adopted before the message is judged (as before hostile-input
   * checks): a higher term from an unknown sender, or above TERM_MAX, still moves this node to
   * that term, though the rest of the message is dropped. One forged frame then raises the
   * cluster's term at will (to 2^53 − 1: no election can follow).
   */
  readonly trustSenderTerm: boolean;
}

/** No mutant: the only value production code should use. */
export const RAFT_NO_MUTANTS: RaftMutants = Object.freeze({
  noNoopAtTermStart: false,
  voteNotPersisted: false,
  ackBeforeSync: false,
  commitPreviousTermByCount: false,
  preVoteWithoutCheckQuorum: false,
  readsWithoutReadIndex: false,
  configChangeBeforeTermCommit: false,
  trustSenderTerm: false,
});

export interface RaftConfig {
  /** This node's id, as its peers address it. Must be one of `voters`. */
  readonly id: NodeId;
  /**
   * The voting members when the cluster was created (bootstrap), identical on every member.
   * Membership changes go through the log (`proposeMembershipChange`); config entries and
   * snapshots override this list on every node that has them.
   */
  readonly voters: readonly NodeId[];
  /**
   * Bootstrap learners (non-voting members). A node that joins a running cluster starts with
   * the cluster's voters and itself as a learner, then waits for the leader (which must have
   * added it with an `add-learner` change) to send it the log. Default: none.
   */
  readonly learners?: readonly NodeId[];
  /**
   * Nodes this node hears besides the members of the configurations it holds (bootstrap,
   * snapshot, and every config entry in its log): the machines the operator listed for the
   * cluster. Messages from anyone else are rejected (`unknown-sender`). Needed when membership
   * changes: a node that joins, or that lags behind the change that added the current leader,
   * has no config entry naming that leader yet. Default: none.
   * Trade-off: every id listed here may speak for itself without being a member; without
   * authentication on the links, ids are only claimed (docs/raft.md).
   */
  readonly knownPeers?: readonly NodeId[];
  /**
   * Lower bound of the randomized election timeout: a follower that hears nothing from a leader
   * for a random time in [electionTimeoutMsMin, electionTimeoutMsMax) starts an election. Also
   * the check-quorum window (a leader steps down when a majority has been silent this long) and
   * the leader-stickiness window (a follower that heard from its leader more recently ignores
   * (pre-)vote requests).
   * Unit: ms. Default: 1000 (LAN), 300 (LOCAL).
   * Trade-off: lower detects a dead leader sooner but risks needless elections when heartbeats
   * are delayed (GC pauses, slow disks); Raft §5.6 wants broadcast time << this << MTBF.
   */
  readonly electionTimeoutMsMin: number;
  /**
   * Upper bound (exclusive) of the randomized election timeout.
   * Unit: ms. Default: 2000 (LAN), 600 (LOCAL), i.e. twice the minimum as in etcd.
   * Trade-off: a wider range makes split votes rarer (candidates rarely time out together)
   * at the cost of a slower worst-case failover.
   */
  readonly electionTimeoutMsMax: number;
  /**
   * How often a leader sends heartbeats (which also carry its commit index and retry probes).
   * Unit: ms. Default: 100 (LAN, as etcd), 50 (LOCAL).
   * Trade-off: about electionTimeoutMsMin / 10, so several heartbeats may be lost before a
   * follower gives up on its leader; lower costs more messages per second per follower.
   */
  readonly heartbeatIntervalMs: number;
  /**
   * Run a pre-vote round (Raft thesis §9.6) before a real election: a node that could not win
   * does not raise its term, so a partitioned node rejoins without deposing a healthy leader.
   * Default: true.
   */
  readonly preVote: boolean;
  /**
   * A leader that has not heard from a majority within electionTimeoutMsMin steps down, and
   * followers stick to a live leader (they ignore (pre-)votes within electionTimeoutMsMin of
   * hearing from it). Needed for a deposed leader to stop serving within one election timeout.
   * Default: true.
   */
  readonly checkQuorum: boolean;
  /**
   * Act on the transport's hint that the stream to the leader broke (`onPeerReset`: a
   * connection reset or refused, or closed without a goodbye, which is what the kernel does to
   * the sockets of a process that died). A follower then starts its pre-vote within
   * leaderResetDelayRatioMax × electionTimeoutMsMin instead of waiting out its election
   * timeout; and a pre-vote receiver sets leader stickiness aside while it, too, has seen the
   * leader's link reset since the leader's last message. So a reset seen by a majority (the
   * leader process is gone) elects in a few round trips, while one flaky link changes nothing:
   * the others still hear the leader and refuse the pre-vote. Only *when* a pre-vote starts
   * changes; real votes keep every Raft rule, so safety does not rest on the hint. A leader
   * that is silently cut off (no reset) is handled exactly as without this.
   * Needs preVote (without it the hint is ignored). With leaseBasedReads, receivers keep their
   * stickiness (the lease rests on it): only the early start applies.
   * Default: true.
   */
  readonly preVoteOnLeaderReset: boolean;
  /**
   * After the leader's link resets, the pre-vote starts within
   * [0, leaderResetDelayRatioMax × electionTimeoutMsMin). Every follower sees the reset at about
   * the same instant; two that pre-vote within one network delay of each other split the vote,
   * which costs a whole election timeout. So the span is cut into one slot per voter other than
   * the leader, in id order, and each starts at a random point of its own slot.
   * Unit: fraction of electionTimeoutMsMin. Default: 0.1 (0–100 ms on LAN, 0–30 ms LOCAL).
   * Trade-off: the last slot is the worst case when earlier nodes cannot win (a stale log);
   * a wider span keeps slots wide against network and disk jitter at the cost of a slower
   * failover (by half the span on average). Must be in [0, 1).
   */
  readonly leaderResetDelayRatioMax: number;
  /**
   * How many append messages carrying entries may be unacknowledged per follower while it is
   * replicating (pipelining). When the window is full, sending pauses until acks arrive.
   * Unit: messages. Default: 256 (etcd's example value).
   * Trade-off: with entriesPerMessageMax this bounds per-follower memory and the work lost when
   * a follower falls behind; higher keeps a long fat pipe full.
   */
  readonly inflightMessagesMax: number;
  /**
   * At most this many entries in one append message.
   * Unit: entries. Default: 1024.
   * Trade-off: bounds the work of one receive; higher amortizes per-message costs better.
   */
  readonly entriesPerMessageMax: number;
  /**
   * At most this many entry bytes (data plus a fixed per-entry overhead) in one append message;
   * one entry is always sent, so this is also the largest proposal accepted.
   * Unit: bytes. Default: 1 MiB (etcd's default MaxSizePerMsg for its server).
   * Trade-off: large messages delay heartbeats queued behind them on the same stream.
   */
  readonly bytesPerMessageMax: number;
  /**
   * The leader refuses new proposals (`dropped`, `too-many-pending`) while this many or more
   * entries of its log are not yet committed (lastIndex - commitIndex, its no-op included):
   * back-pressure instead of an unbounded log tail when followers or the disk fall behind.
   * Unit: entries. Default: 8192.
   * Trade-off: higher absorbs longer bursts; every pending entry stays in memory.
   */
  readonly pendingProposalsMax: number;
  /**
   * The largest chunk of a snapshot in one InstallSnapshot message (Raft §7); the snapshot goes
   * one chunk at a time, each answered before the next.
   * Unit: bytes. Default: 512 KiB. Chunks are also cut to bytesPerMessageMax when it is lower.
   * Trade-off: larger chunks send a snapshot in fewer round trips; smaller ones delay less the
   * heartbeats queued behind them and lose less work when a chunk is lost.
   */
  readonly snapshotChunkBytesMax: number;
  /**
   * The largest snapshot a follower accepts to assemble (InstallSnapshot's totalBytes); larger
   * ones are rejected (`snapshot-too-large`). A follower holds the whole snapshot in memory
   * until it is complete.
   * Unit: bytes. Default: 1 GiB (a state machine is held in memory whole, and etcd advises
   * keeping its data under 8 GiB with a 2 GiB default quota).
   * Trade-off: must exceed the largest state-machine snapshot any member takes, or a lagging
   * follower can never catch up; higher lets a forged snapshot hold more of its memory.
   */
  readonly snapshotBytesMax: number;
  /**
   * The most chunks one snapshot may be assembled from; a snapshot that needs more is rejected
   * (`snapshot-too-many-chunks`) and its assembly dropped. Bounds the per-chunk bookkeeping
   * when chunks are tiny.
   * Unit: chunks. Default: 65,536 (1 GiB at 16 KiB chunks; the default 512 KiB chunks need
   * 2,048).
   * Trade-off: must cover the largest snapshot at the leader's snapshotChunkBytesMax.
   */
  readonly snapshotChunksMax: number;
  /**
   * The most reads (`readIndex`) one node holds at once: waiting for a heartbeat round, for the
   * leader's first commit of its term, or forwarded to the leader; more are `dropped`.
   * Unit: reads. Default: 4096.
   * Trade-off: bounds memory under a read storm; each pending read is a few dozen bytes.
   */
  readonly pendingReadsMax: number;
  /**
   * Lease-based reads (opt-in; Raft thesis §6.4.1): a leader answers reads from its own state,
   * without a heartbeat round, while its lease holds. The lease is taken at the send time of a
   * heartbeat round a majority answered and lasts
   *   electionTimeoutMsMin × (1 − clockRateErrorMax) / (1 + clockRateErrorMax),
   * the shortest real time in which, with every clock's rate within ±clockRateErrorMax, none
   * of that majority will vote for another candidate (leader stickiness keeps them for
   * electionTimeoutMsMin of their own clock after they heard the leader; a node that restarts
   * refuses votes for electionTimeoutMsMin after it starts when this is on). Requires
   * checkQuorum (which brings stickiness). No lease during or after a leadership transfer in the
   * same term (a transfer's forced votes bypass stickiness). Unsafe if a clock's rate errs more
   * than clockRateErrorMax, or a process pauses between reading the clock and answering.
   * Default: false (ReadIndex: one heartbeat round per batch of reads, safe with any clock).
   */
  readonly leaseBasedReads: boolean;
  /**
   * The largest rate error of any member's monotonic clock (ρ), for the lease above: a clock
   * may run between (1 − ρ) and (1 + ρ) times real time.
   * Unit: ratio. Default: 0.01 (1%, far above quartz drift of about 50 ppm, to cover VM
   * scheduling and NTP slewing). Must be in [0, 0.5).
   */
  readonly clockRateErrorMax: number;
  /** TEST-ONLY planted bugs, see {@link RaftMutants}. Default: {@link RAFT_NO_MUTANTS}. */
  readonly mutants: RaftMutants;
}

/** The tuning part of a config: everything except who the members are. */
export type RaftTuning = Omit<RaftConfig, 'id' | 'voters'>;

/** Servers on one LAN or in one cloud region: etcd's timings (heartbeat 100 ms, election 1-2 s). */
export const RAFT_DEFAULTS_LAN: RaftTuning = Object.freeze({
  electionTimeoutMsMin: 1000,
  electionTimeoutMsMax: 2000,
  heartbeatIntervalMs: 100,
  preVote: true,
  checkQuorum: true,
  preVoteOnLeaderReset: true,
  leaderResetDelayRatioMax: 0.1,
  inflightMessagesMax: 256,
  entriesPerMessageMax: 1024,
  bytesPerMessageMax: 1024 * 1024,
  pendingProposalsMax: 8192,
  snapshotChunkBytesMax: 512 * 1024,
  snapshotBytesMax: 1024 * 1024 * 1024,
  snapshotChunksMax: 65_536,
  pendingReadsMax: 4096,
  leaseBasedReads: false,
  clockRateErrorMax: 0.01,
  mutants: RAFT_NO_MUTANTS,
});

/** All members on one machine (dev clusters, tests): loopback is fast, so fail over sooner. */
export const RAFT_DEFAULTS_LOCAL: RaftTuning = Object.freeze({
  ...RAFT_DEFAULTS_LAN,
  electionTimeoutMsMin: 300,
  electionTimeoutMsMax: 600,
  heartbeatIntervalMs: 50,
});

/** Every rule `config` breaks (empty when valid). */
export function validateRaftConfig(config: RaftConfig): ConfigProblem[] {
  return [...membershipProblems(config), ...timingProblems(config), ...limitProblems(config),
    ...flagProblems(config)];
}

function membershipProblems(config: RaftConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { id, voters } = config;
  if (typeof id !== 'string' || id.length === 0) {
    problems.push({ field: 'id', value: id, rule: 'must be a non-empty string' });
  }
  if (!Array.isArray(voters) || voters.length === 0) {
    problems.push({ field: 'voters', value: voters, rule: 'must be a non-empty list of node ids' });
    return problems;
  }
  if (voters.some((v) => typeof v !== 'string' || v.length === 0)) {
    problems.push({ field: 'voters', value: voters,
      rule: 'every voter must be a non-empty string' });
  }
  if (new Set(voters).size !== voters.length) {
    problems.push({ field: 'voters', value: voters, rule: 'must not list a node twice' });
  }
  const learners: unknown = config.learners ?? [];
  if (!Array.isArray(learners) ||
    learners.some((l) => typeof l !== 'string' || l.length === 0)) {
    problems.push({ field: 'learners', value: learners,
      rule: 'must be a list of non-empty node ids' });
    return problems;
  }
  if (new Set(learners).size !== learners.length ||
    learners.some((l: string) => (voters as readonly string[]).includes(l))) {
    problems.push({ field: 'voters,learners', value: { voters, learners },
      rule: 'a learner is listed twice, or also as a voter' });
  }
  const knownPeers: unknown = config.knownPeers ?? [];
  if (!Array.isArray(knownPeers) ||
    knownPeers.some((p) => typeof p !== 'string' || p.length === 0)) {
    problems.push({ field: 'knownPeers', value: knownPeers,
      rule: 'must be a list of non-empty node ids' });
  }
  if (!voters.includes(id) && !(learners as readonly string[]).includes(id)) {
    problems.push({ field: 'id,voters', value: { id, voters },
      rule: 'voters (or learners) must include id' });
  }
  return problems;
}

function timingProblems(config: RaftConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { electionTimeoutMsMin: min, electionTimeoutMsMax: max, heartbeatIntervalMs } = config;
  const fields = { electionTimeoutMsMin: min, electionTimeoutMsMax: max, heartbeatIntervalMs };
  let allIntegers = true;
  for (const [field, value] of Object.entries(fields)) {
    if (!isPositiveInteger(value)) {
      problems.push({ field, value, rule: 'must be a positive integer (ms)' });
      allIntegers = false;
    }
  }
  if (!allIntegers) return problems;
  if (max <= min) {
    problems.push({ field: 'electionTimeoutMsMin,electionTimeoutMsMax', value: { min, max },
      rule: 'electionTimeoutMsMax must exceed electionTimeoutMsMin (the timeout is drawn from ' +
        '[min, max); an empty range makes split votes repeat)' });
  }
  if (min < 2 * heartbeatIntervalMs) {
    problems.push({ field: 'electionTimeoutMsMin,heartbeatIntervalMs',
      value: { electionTimeoutMsMin: min, heartbeatIntervalMs },
      rule: 'electionTimeoutMsMin must be at least 2 x heartbeatIntervalMs (about 10 x is ' +
        'advised), or one late heartbeat starts an election' });
  }
  return problems;
}

function limitProblems(config: RaftConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const limits = {
    inflightMessagesMax: config.inflightMessagesMax,
    entriesPerMessageMax: config.entriesPerMessageMax,
    bytesPerMessageMax: config.bytesPerMessageMax,
    pendingProposalsMax: config.pendingProposalsMax,
    pendingReadsMax: config.pendingReadsMax,
    snapshotChunkBytesMax: config.snapshotChunkBytesMax,
    snapshotBytesMax: config.snapshotBytesMax,
    snapshotChunksMax: config.snapshotChunksMax,
  };
  for (const [field, value] of Object.entries(limits)) {
    if (!isPositiveInteger(value)) {
      problems.push({ field, value, rule: 'must be a positive integer' });
    }
  }
  return problems;
}

function flagProblems(config: RaftConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const flags = ['preVote', 'checkQuorum', 'preVoteOnLeaderReset', 'leaseBasedReads'] as const;
  for (const field of flags) {
    if (typeof config[field] !== 'boolean') {
      problems.push({ field, value: config[field], rule: 'must be a boolean' });
    }
  }
  const ratio = config.leaderResetDelayRatioMax;
  if (typeof ratio !== 'number' || !(ratio >= 0 && ratio < 1)) {
    problems.push({ field: 'leaderResetDelayRatioMax', value: ratio,
      rule: 'must be a fraction of electionTimeoutMsMin in [0, 1)' });
  }
  const rho = config.clockRateErrorMax;
  if (typeof rho !== 'number' || !(rho >= 0 && rho < 0.5)) {
    problems.push({ field: 'clockRateErrorMax', value: rho, rule: 'must be a ratio in [0, 0.5)' });
  }
  if (config.leaseBasedReads === true && config.checkQuorum !== true) {
    problems.push({ field: 'leaseBasedReads,checkQuorum',
      value: { leaseBasedReads: config.leaseBasedReads, checkQuorum: config.checkQuorum },
      rule: 'lease-based reads need checkQuorum (its leader stickiness is what the lease ' +
        'relies on)' });
  }
  const mutants: unknown = config.mutants;
  if (typeof mutants !== 'object' || mutants === null) {
    problems.push({ field: 'mutants', value: mutants,
      rule: 'must be an object of booleans (use RAFT_NO_MUTANTS)' });
    return problems;
  }
  for (const name of Object.keys(RAFT_NO_MUTANTS)) {
    const value: unknown = (mutants as Record<string, unknown>)[name];
    if (typeof value !== 'boolean') {
      problems.push({ field: `mutants.${name}`, value, rule: 'must be a boolean' });
    }
  }
  return problems;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
