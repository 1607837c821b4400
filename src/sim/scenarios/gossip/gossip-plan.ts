/**
 * The script of one gossip seed, drawn up front from the seed alone (so that a Lifeguard-on
 * and a Lifeguard-off run of one seed face the very same faults):
 *
 *   warm-up │ coordinator crash │ fault segment 1 │ partition … heal │ fault segment 2
 *   │ coordinator leaves
 *
 * Phases follow each other as soon as the cluster has converged (every member names the same
 * live leader and sees the same live members) and stayed so for `settleMs`, or at their bound,
 * which is then a violation. Each scripted leader event is measured in its own phase, free of
 * every other fault. The fault segments hold random member crashes (each restarted once every
 * member holds it dead, or at the dissemination bound) and the swarm faults this seed drew
 * (pauses, slow members, loss bursts, latency spikes, bounces, bad links, clock drift); their
 * instants are offsets from the segment's start.
 */
import { nodeId, type NodeId } from '../../../core/ids.js';
import { randomChance, randomFloat, randomInt, shuffle } from '../../../core/random.js';
import {
  swimPushPullIntervalMs, swimStableAfterMs, swimSuspicionMaxMs, type SwimConfig,
} from '../../../core/swim/index.js';
import type { Prng } from '../../prng.js';

export type SwarmKind =
  | 'pause' | 'slow' | 'loss-burst' | 'latency-spike' | 'bounce' | 'bad-links' | 'drift';

export const SWARM_KINDS: readonly SwarmKind[] = [
  'pause', 'slow', 'loss-burst', 'latency-spike', 'bounce', 'bad-links', 'drift',
];
/** Kinds that can make a live member look dead: a seed with none of them (and no loss) is calm. */
export const DEGRADING_KINDS: readonly SwarmKind[] = [
  'pause', 'slow', 'loss-burst', 'latency-spike', 'bad-links',
];

/** The durations and bounds of the script, all derived from the config's own timing. */
export interface GossipTimeline {
  readonly probeIntervalMs: number;
  /** Members n2..nN ask to join over this span. Unit: ms. */
  readonly joinSpreadMs: number;
  /** Bound for every member to agree on the leader and the view after a crash, a leave, the
   * warm-up or a fault segment. Unit: ms. */
  readonly agreementBoundMs: number;
  /** The same after a heal (reconnects must find the far side first). Unit: ms. */
  readonly healAgreementBoundMs: number;
  /** Bound for every live member to hold a crashed member dead. Unit: ms. */
  readonly disseminationBoundMs: number;
  /** How long a fault may still explain a verdict (suspicions outlive their cause). Unit: ms. */
  readonly faultShadowMs: number;
  /** How long the partition lasts: long enough for the minority to latch. Unit: ms. */
  readonly partitionMs: number;
  /** How long a fault segment injects faults. Unit: ms. */
  readonly faultSpanMs: number;
  /** A phase ends once converged for this long. Unit: ms. */
  readonly settleMs: number;
  /** How often convergence is polled. Unit: ms. */
  readonly pollMs: number;
  /** A crashed member restarts this long after every member holds it dead. Unit: ms. */
  readonly restartAfterDeadMs: number;
  /** The member that left stops its process this long after `leave()`. Unit: ms. */
  readonly leaveLingerMs: number;
  /** The run is cut here whatever happens: the sum of every bound. Unit: ms. */
  readonly limitMs: number;
}

export type FaultAction =
  | { readonly kind: 'crash'; readonly atMs: number; readonly member: NodeId }
  | { readonly kind: 'bounce'; readonly atMs: number; readonly member: NodeId }
  | { readonly kind: 'pause'; readonly atMs: number; readonly member: NodeId;
    readonly durationMs: number }
  | { readonly kind: 'slow'; readonly atMs: number; readonly member: NodeId;
    readonly durationMs: number; readonly inboundDelayMs: number }
  | { readonly kind: 'loss-burst'; readonly atMs: number; readonly durationMs: number;
    readonly lossRate: number }
  | { readonly kind: 'latency-spike'; readonly atMs: number; readonly durationMs: number;
    readonly latencyMsExtra: number };

export interface GossipPlan {
  readonly ids: readonly NodeId[];
  /** The oldest members: never hit by random faults (the scripted events are about them). */
  readonly protectedIds: readonly NodeId[];
  readonly lossRate: number;
  readonly kinds: readonly SwarmKind[];
  readonly timeline: GossipTimeline;
  /** Members that go to the minority side with the coordinator (who joins them then). */
  readonly minority: readonly NodeId[];
  /** Faults of each segment; `atMs` counts from the segment's start. */
  readonly segments: readonly [readonly FaultAction[], readonly FaultAction[]];
  /** Links of these members lose this much more, both ways, all run. */
  readonly badLinks: readonly { readonly member: NodeId; readonly lossRateExtra: number }[];
  readonly drift: readonly { readonly member: NodeId; readonly driftRate: number }[];
}

/** Draws the plan of one seed; `config` is the Lifeguard-on config (the longer timeouts). */
export function drawGossipPlan(
  prng: Prng, members: number, config: SwimConfig, lossOption: number | undefined,
  durationMs: number | undefined,
): GossipPlan {
  const ids = Array.from({ length: members }, (_, i) => nodeId(`n${i + 1}`));
  const protectedCount = Math.min(6, Math.floor(members / 2));
  const young = ids.slice(protectedCount);
  const lossRate = lossOption
    ?? (randomChance(prng, 0.5) ? 0 : 0.02 * randomFloat(prng));
  const kinds = drawKinds(prng);
  const timeline = computeTimeline(members, config, durationMs);
  // A rack to a third of the cluster: the cost of a partition grows with minority × majority.
  const minorityShare = 0.05 + 0.25 * randomFloat(prng);
  const minoritySize = Math.max(1, Math.round(minorityShare * members)) - 1;
  const minority = shuffle(prng, [...young]).slice(0, Math.min(minoritySize, young.length));
  const drawSegment = (): FaultAction[] => {
    const faults: FaultAction[] = [];
    drawCrashes(prng, young, members, timeline, faults);
    drawSwarmFaults(prng, young, kinds, timeline, config, faults);
    return faults.sort((a, b) => a.atMs - b.atMs);
  };
  const segments: [FaultAction[], FaultAction[]] = [drawSegment(), drawSegment()];
  const badLinks = kinds.includes('bad-links')
    ? pickSome(prng, young, 0.01, 10).map((member) => ({
      member, lossRateExtra: 0.05 + 0.25 * randomFloat(prng),
    }))
    : [];
  const drift = kinds.includes('drift')
    ? ids.map((member) => ({ member, driftRate: (2 * randomFloat(prng) - 1) * 0.01 }))
    : [];
  return {
    ids, protectedIds: ids.slice(0, protectedCount), lossRate, kinds, timeline, minority,
    segments, badLinks, drift,
  };
}

/**
 * A third of the seeds are calm (only bounces and drift, which never make a live member look
 * dead); the others draw each kind with probability 1/2, as swarm testing does.
 */
function drawKinds(prng: Prng): SwarmKind[] {
  const calm = randomChance(prng, 1 / 3);
  return SWARM_KINDS.filter((kind) => {
    const drawn = randomChance(prng, 0.5);
    return calm ? drawn && !DEGRADING_KINDS.includes(kind) : drawn;
  });
}

/** The script's durations and bounds, from the config's own timing (see the module comment). */
export function computeTimeline(
  members: number, config: SwimConfig, durationMs: number | undefined,
): GossipTimeline {
  const p = config.probeIntervalMs;
  const suspicionMaxMs = swimSuspicionMaxMs(config, members);
  // A crash: probed within a few periods, suspicion timeout, then gossip to everyone.
  const disseminationBoundMs = suspicionMaxMs + 30 * p;
  const agreementBoundMs = disseminationBoundMs + 20 * p;
  // A heal: reconnects find the far side, the minority rejoins, the claim moves on.
  const healAgreementBoundMs = 2 * config.reconnectIntervalMs
    + swimPushPullIntervalMs(config, members) + suspicionMaxMs + 30 * p;
  // Long enough for the minority to declare the majority dead and latch.
  const partitionMs = Math.max(suspicionMaxMs + 40 * p, swimStableAfterMs(config, members));
  const joinSpreadMs = Math.min(10 * p, 2 * members);
  const settleMs = 10 * p;
  // The fixed part of a run, about: warm-up, three short leader phases, the partition.
  const fixedMs = joinSpreadMs + partitionMs + 4 * (settleMs + 10 * p);
  const faultSpanMs = Math.max(2 * suspicionMaxMs, 40 * p, ((durationMs ?? 0) - fixedMs) / 2);
  const limitMs = joinSpreadMs + 4 * agreementBoundMs + 2 * (faultSpanMs
    + disseminationBoundMs + agreementBoundMs) + partitionMs + healAgreementBoundMs;
  return {
    probeIntervalMs: p, joinSpreadMs, agreementBoundMs, healAgreementBoundMs,
    disseminationBoundMs, faultShadowMs: 2 * suspicionMaxMs + 50 * p, partitionMs,
    faultSpanMs, settleMs, pollMs: 5 * p, restartAfterDeadMs: 10 * p,
    leaveLingerMs: 20 * config.gossipIntervalMs, limitMs,
  };
}

/**
 * Bursts of young members crash in the first half of the segment; each restarts (a fresh
 * process that joins again) once every member holds it dead. At most a tenth of the cluster
 * is down at once.
 */
function drawCrashes(
  prng: Prng, young: readonly NodeId[], members: number, timeline: GossipTimeline,
  out: FaultAction[],
): void {
  const bursts = members >= 20 ? 2 : 1;
  const burstMax = Math.max(1, Math.min(5, Math.floor(members / 50)));
  const victims = shuffle(prng, [...young]);
  let next = 0;
  for (let b = 0; b < bursts; b++) {
    const atMs = randomFloat(prng) * timeline.faultSpanMs / 2;
    const size = randomInt(prng, 1, burstMax + 1);
    for (let i = 0; i < size && next < victims.length; i++) {
      out.push({ kind: 'crash', atMs, member: victims[next++] as NodeId });
    }
  }
}

/**
 * Swarm faults, at rates that do not grow with the cluster: a sick member makes news that
 * every member relays, so a fixed share of sick members would make a large cluster mostly
 * noise (and a simulation mostly gossip).
 */
function drawSwarmFaults(
  prng: Prng, young: readonly NodeId[], kinds: readonly SwarmKind[],
  timeline: GossipTimeline, config: SwimConfig, out: FaultAction[],
): void {
  const p = config.probeIntervalMs;
  const spanMs = timeline.faultSpanMs;
  const within = (lengthMs: number): number => randomFloat(prng) * (spanMs - lengthMs);
  if (kinds.includes('pause')) {
    // GC-like stalls: a few members stall now and then, up to 2..10 probe periods.
    const pauseMsMax = p * (2 + 8 * randomFloat(prng));
    for (const member of pickSome(prng, young, 0.05, 8)) {
      for (let atMs = 0; ;) {
        atMs += p * (10 + 30 * randomFloat(prng));
        const durationMs = pauseMsMax * (0.25 + 0.75 * randomFloat(prng));
        if (atMs + durationMs >= spanMs) break;
        out.push({ kind: 'pause', atMs, member, durationMs });
      }
    }
  }
  if (kinds.includes('slow')) {
    // CPU starvation: messages wait in the socket buffer while timers still run on time.
    for (const member of pickSome(prng, young, 0.01, 3)) {
      const durationMs = spanMs * (0.3 + 0.5 * randomFloat(prng));
      const inboundDelayMs = config.probeTimeoutMs * (0.5 + 2.5 * randomFloat(prng));
      out.push({ kind: 'slow', atMs: within(durationMs), member, durationMs, inboundDelayMs });
    }
  }
  drawNetworkFaults(prng, kinds, spanMs, config, out);
  if (kinds.includes('bounce')) {
    for (let i = randomInt(prng, 1, 3); i > 0; i--) {
      const member = young[randomInt(prng, 0, young.length)] as NodeId;
      out.push({ kind: 'bounce', atMs: within(0), member });
    }
  }
}

/** Network-wide faults one after the other, each in its own slot of the span. */
function drawNetworkFaults(
  prng: Prng, kinds: readonly SwarmKind[], spanMs: number, config: SwimConfig,
  out: FaultAction[],
): void {
  const p = config.probeIntervalMs;
  const network: ('loss-burst' | 'latency-spike')[] = [];
  if (kinds.includes('loss-burst')) network.push('loss-burst');
  if (kinds.includes('latency-spike')) network.push('latency-spike');
  network.forEach((kind, slot) => {
    const slotMs = spanMs / network.length;
    const durationMs = Math.min(slotMs * 0.9, p * (10 + 30 * randomFloat(prng)));
    const atMs = slot * slotMs + randomFloat(prng) * (slotMs - durationMs);
    if (kind === 'loss-burst') {
      out.push({ kind, atMs, durationMs, lossRate: 0.05 + 0.15 * randomFloat(prng) });
    } else {
      const latencyMsExtra = config.probeTimeoutMs * (0.5 + 1.5 * randomFloat(prng));
      out.push({ kind, atMs, durationMs, latencyMsExtra });
    }
  });
}

/** About `share` of `ids`, at least one and at most `max`, distinct. */
function pickSome(prng: Prng, ids: readonly NodeId[], share: number, max: number): NodeId[] {
  const count = Math.max(1, Math.min(max, Math.round(share * ids.length)));
  return shuffle(prng, [...ids]).slice(0, count);
}
