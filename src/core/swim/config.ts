/**
 * Configuration of a SWIM member (Das, Gupta, Motivala 2002) with the Lifeguard refinements
 * (Dadgar et al. 2017) and the emergent leader's split-brain strategy: the fields, the named
 * profiles, the formulas that scale with the cluster size N, and the validator, which reports
 * every violated rule at once. hashicorp/memberlist's `config.go` is the model for the numbers.
 */
import type { ConfigProblem } from '../config.js';

/** How the emergent leader behaves when the membership splits (Akka's split-brain resolver). */
export type SplitBrainStrategy = 'keep-majority' | 'keep-oldest' | 'static-quorum';

export const SPLIT_BRAIN_STRATEGIES: readonly SplitBrainStrategy[] =
  Object.freeze(['keep-majority', 'keep-oldest', 'static-quorum']);

/**
 * TEST-ONLY planted SWIM bugs. Each flag turns on one small, clearly marked branch in the
 * member that breaks a rule of the protocol, so that the simulator proves its checkers catch
 * it (`conclave sim --scenario gossip --mutant NAME` must fail, and each test names the
 * checker that must fire). Production configs use {@link SWIM_NO_MUTANTS}.
 */
export interface SwimMutants {
  /**
   * A failed probe declares its target dead at once, with no suspicion for it to refute
   * (SWIM §4.2 exists because of this: a slow or lossy member would be killed).
   */
  readonly deadWithoutSuspicion: boolean;
  /**
   * An `alive` update at the same incarnation as a suspicion or a death verdict overrides it
   * (SWIM §4.2: only a higher incarnation refutes; at equal ones suspect and dead win). Stale
   * `alive` news still circulating (full-state exchanges of members that had not heard yet)
   * then brings crashed members back to life, and the views flap between alive and dead.
   */
  readonly aliveAtEqualIncarnation: boolean;
  /**
   * Probes, acks, ping-reqs and nacks carry no updates (SWIM §4.1's piggybacking forgotten;
   * the separate gossip rounds still run), and so the buddy system is gone too: a suspect
   * being probed is not told that it is suspected.
   */
  readonly noPiggyback: boolean;
}

/** No mutant: the only value production code should use. */
export const SWIM_NO_MUTANTS: SwimMutants = Object.freeze({
  deadWithoutSuspicion: false,
  aliveAtEqualIncarnation: false,
  noPiggyback: false,
});

export interface SwimConfig {
  /**
   * Length of one protocol period: each period the member probes one other member, taken in a
   * randomized round-robin order (SWIM §4.3), so every member is probed by everyone within two
   * rounds. Lifeguard stretches it to `probeIntervalMs × (awareness + 1)` while this member
   * doubts its own health.
   * Unit: ms. Default: 1000 (LAN, memberlist's "failure check every second"), 200 (LOCAL).
   * Trade-off: shorter detects failures sooner at the cost of more probe traffic (one ping,
   * one ack per member per period, whatever N is).
   */
  readonly probeIntervalMs: number;
  /**
   * How long to wait for the direct ack before asking `indirectChecks` members to probe the
   * target for us. Should be about the 99th percentile of the round-trip time. At most half of
   * `probeIntervalMs`, so that the indirect round trip (two RTTs) fits in the period. Lifeguard
   * scales it like the interval.
   * Unit: ms. Default: 500 (LAN, memberlist's "reasonable RTT time for LAN"), 100 (LOCAL:
   * loopback RTTs are far lower, but a busy test process stalls for tens of ms).
   */
  readonly probeTimeoutMs: number;
  /**
   * Number of members asked to ping the target (ping-req) when the direct ack is late (SWIM
   * §3.1, k). Any one relayed ack saves the target. 0 disables indirect probes.
   * Unit: members. Default: 3 (LAN and LOCAL, memberlist's LAN value: with 1% loss per
   * message, three independent relays make a false failure about 10^-6 per probe).
   * Trade-off: more relays mean fewer false suspicions and more traffic on a failed probe.
   */
  readonly indirectChecks: number;
  /**
   * Multiplier of the suspicion timeout: a suspected member is declared dead after
   *   suspicionMin = suspicionMult × max(1, log10(N)) × probeIntervalMs
   * with N the number of live members seen (memberlist's formula). The log term covers the
   * time gossip needs to reach everyone, and so the time the suspect needs to hear the rumour
   * and refute it. With Lifeguard the timer starts at the maximum below and shrinks towards
   * this minimum as independent members confirm the suspicion.
   * Unit: none (multiplier). Default: 4 (LAN and LOCAL, memberlist's LAN value).
   */
  readonly suspicionMult: number;
  /**
   * Lifeguard's dynamic suspicion: the timer starts at
   *   suspicionMax = suspicionMaxTimeoutMult × suspicionMin
   * and drops to suspicionMin after `suspicionMult - 2` independent confirmations, following
   *   timeout = max(min, max − (max − min) × log(c + 1) / log(k + 1))
   * for c confirmations out of k expected. A lone accuser (perhaps the unhealthy one) waits
   * the longest. With `lifeguard` off the timer is fixed at suspicionMin (plain SWIM).
   * Unit: none (multiplier). Default: 6 (LAN and LOCAL, memberlist's value).
   */
  readonly suspicionMaxTimeoutMult: number;
  /**
   * Number of times each membership update is piggybacked before it is dropped:
   *   retransmitLimit = retransmitMult × ceil(log10(N + 1))
   * Infection-style dissemination reaches every member with high probability after about
   * λ·log(N) transmissions (SWIM §4.1); λ is this multiplier.
   * Unit: none (multiplier). Default: 4 (LAN and LOCAL, memberlist's LAN value; memberlist's
   * local profile uses 2, but below ten members that is only two sends per update, and a
   * loopback cluster has bandwidth to spare).
   * Trade-off: higher converges more surely at the cost of bandwidth.
   */
  readonly retransmitMult: number;
  /**
   * How often queued updates are also sent on their own to `gossipFanout` random members, not
   * only piggybacked on probes (memberlist's gossip ticker). Speeds convergence: a probe
   * period is long, gossip rounds are short.
   * Unit: ms. Default: 200 (LAN, memberlist's value), 50 (LOCAL).
   */
  readonly gossipIntervalMs: number;
  /**
   * Members each gossip round is sent to. 0 disables the gossip rounds (updates then travel
   * only on probes, acks and ping-reqs, as in the SWIM paper).
   * Unit: members. Default: 3 (LAN and LOCAL, memberlist's `GossipNodes`).
   */
  readonly gossipFanout: number;
  /**
   * Members recently declared dead still receive gossip for this long, so that a member that
   * was only cut off hears that it was declared dead and can refute (memberlist's
   * `GossipToTheDeadTime`).
   * Unit: ms. Default: 30000 (LAN, same as the push-pull interval), 5000 (LOCAL).
   */
  readonly gossipToTheDeadMs: number;
  /**
   * Most membership updates piggybacked on one datagram.
   * Unit: updates. Default: 16 (LAN and LOCAL: with short ids and addresses an update is about
   * 40–70 bytes, so 16 fit in `datagramBytesMax`).
   */
  readonly piggybackMax: number;
  /**
   * Byte budget of one datagram (by `estimateSwimMessageBytes`): piggybacked updates stop
   * before a datagram would exceed it, so it is not fragmented.
   * Unit: bytes. Default: 1400 (LAN and LOCAL, memberlist's `UDPBufferSize`: below the usual
   * 1500-byte Ethernet MTU minus IP and UDP headers).
   */
  readonly datagramBytesMax: number;
  /**
   * Period of the push-pull anti-entropy: a full state exchange with one random live member
   * over the stream channel. Repairs anything gossip missed. Above 32 members it is stretched
   * to pushPullIntervalMs × (1 + ceil(log2(N / 32))) so that the total push-pull traffic,
   * O(N) per exchange, grows only like N·log N (memberlist's scaling). 0 disables it.
   * Unit: ms. Default: 30000 (LAN, memberlist's "low frequency"), 2000 (LOCAL).
   */
  readonly pushPullIntervalMs: number;
  /**
   * Period of the reconnect attempts: a push-pull with one random member that is dead in this
   * member's view (as Serf does). It is what merges the two sides after a partition heals,
   * because nobody probes or gossips to the dead. 0 disables it.
   * Unit: ms. Default: 30000 (LAN, Serf's `reconnect_interval`), 2000 (LOCAL).
   */
  readonly reconnectIntervalMs: number;
  /**
   * How long a join request to one seed may go unanswered before the next seed is tried.
   * Unit: ms. Default: 10000 (LAN, memberlist's `TCPTimeout`), 1000 (LOCAL).
   */
  readonly joinTimeoutMs: number;
  /**
   * How long a dead or left member's record is kept. While kept, it outranks stale gossip
   * (a dead member's old "alive" cannot resurrect it) and the member is a reconnect target.
   * Unit: ms. Default: 86400000 (LAN: a day, Serf's tombstone timeout; a record is about a
   * hundred bytes), 600000 (LOCAL: ten minutes).
   * Must be at least `reconnectIntervalMs` and `gossipToTheDeadMs`.
   */
  readonly deadRetainMs: number;
  /**
   * Lifeguard's local health awareness: the score goes up when this member misses acks or
   * nacks it should have received, or has to refute a suspicion of itself, and down on every
   * timely ack; it is kept in [0, awarenessMax − 1] and multiplies the probe interval and
   * timeout by (score + 1). A member that is slow itself then probes less and waits longer,
   * instead of accusing healthy members.
   * Unit: none (multiplier). Default: 8 (LAN and LOCAL, memberlist's `AwarenessMaxMultiplier`:
   * "probe interval backs off to 8 seconds").
   */
  readonly awarenessMax: number;
  /**
   * Turns the three Lifeguard refinements on: local health awareness (above), dynamic
   * suspicion timeouts with confirmations (`suspicionMaxTimeoutMult`), and nacks from indirect
   * probers. Off gives plain SWIM, so a simulation can compare false positives both ways.
   * Unit: boolean. Default: true (LAN and LOCAL; Lifeguard cut false positives about 50-fold
   * in its paper's experiments).
   */
  readonly lifeguard: boolean;
  /**
   * What the emergent leader does when the membership splits (see `oldest-leader.ts`):
   * - 'keep-majority': act only while more than half of the last stable membership is seen
   *   alive (exactly half: only the side holding its oldest member acts). Akka's default.
   * - 'keep-oldest': act only on the side that holds the oldest member of the last stable
   *   membership, unless that member is alone there (then the other side acts).
   * - 'static-quorum': act only while at least `staticQuorumSize` members are seen alive.
   * Unit: strategy name. Default: 'keep-majority' (LAN and LOCAL).
   */
  readonly splitBrainStrategy: SplitBrainStrategy;
  /**
   * Live members needed to act under 'static-quorum'. Choose more than half of the largest
   * cluster size you run, or both sides of a split may act. Ignored by the other strategies.
   * Unit: members. Default: 0 (unused by the default strategy; must be ≥ 1 with static-quorum).
   */
  readonly staticQuorumSize: number;
  /**
   * How long the set of live members must stay unchanged before it becomes "the last stable
   * membership" that keep-majority and keep-oldest count against (Akka's `stable-after`). It
   * is only updated while this side acts, so a minority never promotes itself. The member
   * never waits less than suspicionMax(N) + 4 × probeIntervalMs, the time by which a whole
   * partition's deaths have been declared: waiting less would let one side of a progressive
   * split adopt a shrunken membership before its last deaths arrive.
   * Unit: ms. Default: 30000 (LAN, a little above Akka's 20 s), 5000 (LOCAL).
   */
  readonly stableAfterMs: number;
  /**
   * Admissions of members this member did not know (a `join` it answers, or an `alive` about a
   * stranger) allowed per second once the burst is spent (plausibility.ts, `AdmissionBudget`).
   * A join beyond it goes unanswered (the joiner retries after `joinTimeoutMs`); a stranger's
   * news beyond it is dropped (gossip and push-pull carry it again). It bounds how fast forged
   * joins can fill the table when gossip is not encrypted (a burst once admitted 1,944).
   * Unit: members/s. Default: 50 (LAN), 500 (LOCAL: the simulation joins 1,000 members in 2 s
   * through one seed). Trade-off: lower holds a forger back longer; a real mass start then takes
   * N / rate seconds to converge.
   */
  readonly admissionsPerSecondMax: number;
  /**
   * Admissions allowed at once before `admissionsPerSecondMax` applies.
   * Unit: members. Default: 500 (LAN), 1000 (LOCAL). Trade-off: a mass start of up to this
   * many members is not slowed; a forged burst admits up to this many (they die by suspicion).
   */
  readonly admissionsBurstMax: number;
  /** TEST-ONLY planted bugs, see {@link SwimMutants}. Default: {@link SWIM_NO_MUTANTS}. */
  readonly mutants: SwimMutants;
}

/** memberlist's LAN values; the emergent leader's values follow Akka. */
export const SWIM_DEFAULTS_LAN: SwimConfig = Object.freeze({
  probeIntervalMs: 1000,
  probeTimeoutMs: 500,
  indirectChecks: 3,
  suspicionMult: 4,
  suspicionMaxTimeoutMult: 6,
  retransmitMult: 4,
  gossipIntervalMs: 200,
  gossipFanout: 3,
  gossipToTheDeadMs: 30_000,
  piggybackMax: 16,
  datagramBytesMax: 1400,
  pushPullIntervalMs: 30_000,
  reconnectIntervalMs: 30_000,
  joinTimeoutMs: 10_000,
  deadRetainMs: 86_400_000,
  awarenessMax: 8,
  lifeguard: true,
  splitBrainStrategy: 'keep-majority',
  staticQuorumSize: 0,
  stableAfterMs: 30_000,
  admissionsPerSecondMax: 50,
  admissionsBurstMax: 500,
  mutants: SWIM_NO_MUTANTS,
});

/** Loopback, tests and simulation: the LAN profile about five times faster. */
export const SWIM_DEFAULTS_LOCAL: SwimConfig = Object.freeze({
  ...SWIM_DEFAULTS_LAN,
  probeIntervalMs: 200,
  probeTimeoutMs: 100,
  gossipIntervalMs: 50,
  gossipToTheDeadMs: 5000,
  pushPullIntervalMs: 2000,
  reconnectIntervalMs: 2000,
  joinTimeoutMs: 1000,
  deadRetainMs: 600_000,
  stableAfterMs: 5000,
  admissionsPerSecondMax: 500,
  admissionsBurstMax: 1000,
});

/** log10(N) with the floor of 1 that memberlist applies, so small clusters get one unit. */
function nodeScale(liveMembers: number): number {
  return Math.max(1, Math.log10(Math.max(1, liveMembers)));
}

/** suspicionMin: the suspicion timeout after enough confirmations (plain SWIM's only one). */
export function swimSuspicionMinMs(config: SwimConfig, liveMembers: number): number {
  return config.suspicionMult * nodeScale(liveMembers) * config.probeIntervalMs;
}

/** suspicionMax: Lifeguard's starting suspicion timeout, before any confirmation. */
export function swimSuspicionMaxMs(config: SwimConfig, liveMembers: number): number {
  const min = swimSuspicionMinMs(config, liveMembers);
  return config.lifeguard ? config.suspicionMaxTimeoutMult * min : min;
}

/** How many confirmations drive a suspicion timer to its minimum (memberlist: mult − 2). */
export function swimSuspicionConfirmationsWanted(config: SwimConfig, liveMembers: number): number {
  const k = config.suspicionMult - 2;
  // Fewer than k other members could ever confirm: do not wait for them.
  return liveMembers - 2 < k ? 0 : Math.max(0, k);
}

/** retransmitLimit = retransmitMult × ceil(log10(N + 1)). */
export function swimRetransmitLimit(config: SwimConfig, liveMembers: number): number {
  return config.retransmitMult * Math.max(1, Math.ceil(Math.log10(liveMembers + 1)));
}

/** The push-pull period stretched for clusters above 32 members (see `pushPullIntervalMs`). */
export function swimPushPullIntervalMs(config: SwimConfig, liveMembers: number): number {
  const extra = liveMembers <= 32 ? 0 : Math.ceil(Math.log2(liveMembers / 32));
  return config.pushPullIntervalMs * (1 + extra);
}

/** The quiet time before the live set becomes the last stable membership (see `stableAfterMs`). */
export function swimStableAfterMs(config: SwimConfig, liveMembers: number): number {
  const floor = swimSuspicionMaxMs(config, liveMembers) + 4 * config.probeIntervalMs;
  return Math.max(config.stableAfterMs, floor);
}

/**
 * An upper bound on the time from a crash to the moment the member that first noticed
 * declares it dead, with no message loss: the crashed member is probed by every other member
 * within two rounds of its randomized round-robin (2 × (N − 1) periods; in practice one of the
 * N − 1 probers reaches it within a period or two), then the probe period itself, then
 * suspicionMax.
 * Add a few gossip rounds for everyone else to hear it.
 */
export function swimDeathDeclarationBoundMs(config: SwimConfig, liveMembers: number): number {
  const rounds = 2 * Math.max(1, liveMembers - 1) * config.probeIntervalMs;
  return rounds + config.probeIntervalMs + swimSuspicionMaxMs(config, liveMembers);
}

/** Every rule `config` breaks; empty when it is valid. */
export function validateSwimConfig(config: SwimConfig): readonly ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  checkTiming(problems, config);
  checkCounts(problems, config);
  checkSplitBrain(problems, config);
  checkMutants(problems, config);
  return problems;
}

function checkMutants(problems: ConfigProblem[], c: SwimConfig): void {
  const mutants: unknown = c.mutants;
  if (typeof mutants !== 'object' || mutants === null) {
    problems.push({
      field: 'mutants', value: mutants, rule: 'must be an object of booleans (SWIM_NO_MUTANTS)',
    });
    return;
  }
  for (const name of Object.keys(SWIM_NO_MUTANTS)) {
    const value: unknown = (mutants as Record<string, unknown>)[name];
    if (typeof value !== 'boolean') {
      problems.push({ field: `mutants.${name}`, value, rule: 'must be a boolean' });
    }
  }
}

function checkTiming(problems: ConfigProblem[], c: SwimConfig): void {
  checkNumber(problems, 'probeIntervalMs', c.probeIntervalMs, 'positive');
  checkNumber(problems, 'probeTimeoutMs', c.probeTimeoutMs, 'positive');
  if (isPositive(c.probeIntervalMs) && isPositive(c.probeTimeoutMs)
    && c.probeTimeoutMs * 2 > c.probeIntervalMs) {
    problems.push({
      field: 'probeTimeoutMs,probeIntervalMs',
      value: { probeTimeoutMs: c.probeTimeoutMs, probeIntervalMs: c.probeIntervalMs },
      rule: 'probeTimeoutMs must be at most half of probeIntervalMs, so that the indirect '
        + 'probe (two round trips) fits in the protocol period',
    });
  }
  checkNumber(problems, 'gossipIntervalMs', c.gossipIntervalMs, 'positive');
  checkNumber(problems, 'gossipToTheDeadMs', c.gossipToTheDeadMs, 'non-negative');
  checkNumber(problems, 'pushPullIntervalMs', c.pushPullIntervalMs, 'non-negative');
  checkNumber(problems, 'reconnectIntervalMs', c.reconnectIntervalMs, 'non-negative');
  checkNumber(problems, 'joinTimeoutMs', c.joinTimeoutMs, 'positive');
  checkNumber(problems, 'deadRetainMs', c.deadRetainMs, 'positive');
  checkNumber(problems, 'stableAfterMs', c.stableAfterMs, 'non-negative');
  const retain = c.deadRetainMs;
  if (isPositive(retain) && isNonNegative(c.reconnectIntervalMs)
    && isNonNegative(c.gossipToTheDeadMs)
    && retain < Math.max(c.reconnectIntervalMs, c.gossipToTheDeadMs)) {
    problems.push({
      field: 'deadRetainMs,reconnectIntervalMs,gossipToTheDeadMs',
      value: {
        deadRetainMs: retain,
        reconnectIntervalMs: c.reconnectIntervalMs,
        gossipToTheDeadMs: c.gossipToTheDeadMs,
      },
      rule: 'deadRetainMs must be at least reconnectIntervalMs and gossipToTheDeadMs, or '
        + 'dead members are forgotten before anyone tries to reach them',
    });
  }
}

function checkCounts(problems: ConfigProblem[], c: SwimConfig): void {
  checkInteger(problems, 'indirectChecks', c.indirectChecks, 0, 16);
  checkInteger(problems, 'suspicionMult', c.suspicionMult, 1, 100);
  checkInteger(problems, 'suspicionMaxTimeoutMult', c.suspicionMaxTimeoutMult, 1, 100);
  checkInteger(problems, 'retransmitMult', c.retransmitMult, 1, 100);
  checkInteger(problems, 'gossipFanout', c.gossipFanout, 0, 64);
  checkInteger(problems, 'piggybackMax', c.piggybackMax, 0, 256);
  checkInteger(problems, 'datagramBytesMax', c.datagramBytesMax, 256, 65_507);
  checkInteger(problems, 'awarenessMax', c.awarenessMax, 1, 64);
  checkInteger(problems, 'admissionsPerSecondMax', c.admissionsPerSecondMax, 1, 1_000_000);
  checkInteger(problems, 'admissionsBurstMax', c.admissionsBurstMax, 1, 1_000_000);
  if (typeof c.lifeguard !== 'boolean') {
    problems.push({ field: 'lifeguard', value: c.lifeguard, rule: 'must be true or false' });
  }
}

function checkSplitBrain(problems: ConfigProblem[], c: SwimConfig): void {
  if (!SPLIT_BRAIN_STRATEGIES.includes(c.splitBrainStrategy)) {
    problems.push({
      field: 'splitBrainStrategy',
      value: c.splitBrainStrategy,
      rule: `must be one of ${SPLIT_BRAIN_STRATEGIES.join(', ')}`,
    });
  }
  const needed = c.splitBrainStrategy === 'static-quorum' ? 1 : 0;
  checkInteger(problems, 'staticQuorumSize', c.staticQuorumSize, needed, 1_000_000,
    needed === 1 ? ' (static-quorum needs at least 1)' : '');
}

function isPositive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function checkNumber(
  problems: ConfigProblem[], field: string, value: unknown, sign: 'positive' | 'non-negative',
): void {
  const ok = sign === 'positive' ? isPositive(value) : isNonNegative(value);
  if (!ok) {
    problems.push({
      field, value, rule: `must be a finite number ${sign === 'positive' ? '> 0' : '>= 0'}`,
    });
  }
}

function checkInteger(
  problems: ConfigProblem[], field: string, value: unknown, min: number, max: number,
  note = '',
): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.push({ field, value, rule: `must be an integer in [${min}, ${max}]${note}` });
  }
}
