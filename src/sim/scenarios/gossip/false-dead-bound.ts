/**
 * The false-dead bound: how many lives of live, answering members a correct SWIM member may
 * end by mistake in one run, derived from the run's fault model (docs/gossip.md, "False deaths
 * under loss"). The checker `false-dead-bound` holds every Lifeguard seed to it.
 *
 * The model, with p the probe interval, t the probe timeout, k the indirect checks, g the
 * gossip interval, F the gossip fanout, N the members, ℓ the loss of every message and ℓX the
 * loss on the links of the member X in question.
 *
 * 1. A probe of X fails (no ack, direct or relayed, by the end of the period) with
 *      q = [1 − (1 − ℓX)² G₂(p − δ)] · [1 − (1 − ℓ)² (1 − ℓX)² G₄(p − t − δ)]^k
 *    where Gₙ(w) is the probability that n message latencies add up to at most w (the
 *    simulated network's latency: a floor plus an exponential tail) and δ the time X takes to
 *    read a message (a starved member). Each member is probed about once per period.
 * 2. A failed probe starts a suspicion with timeout T. X ends up dead only if it does not
 *    refute within T. News needs s = ⌈log_{F+1} N⌉ · (g + mean latency) to spread, once to reach
 *    X's neighbours and once for the refutation to come back, so X has a window
 *    W = T − 2s − δ. In it X gets a chance per probe it receives (1/p) and per gossip message
 *    carrying the rumour (F/g, of which half are counted), each lost with 1 − (1 − ℓX)²:
 *      m(T) = [1 − (1 − ℓX)²]^(W · (1/p + F/(2g)))
 * 3. Plain SWIM has T = suspicionMin. Lifeguard starts at suspicionMax and drops to
 *    suspicionMin once K independent members confirmed (another failed probe of X, about q per
 *    period): m = m(suspicionMax) + P(Binomial(⌊suspicionMax/p⌋, q) ≥ K) · m(suspicionMin).
 * 4. A pause of X for D fails every probe in it (so the timer is at suspicionMin) and leaves
 *    the window W = suspicionMin + p − D − 2s: min(1, (D/p) · m) for that pause (one
 *    incarnation, one life at most).
 * The expected number of lives wrongly ended is λ = Σ (time / p) · q · m over every member and
 * every stretch of constant faults. The bound is the smallest n with P(Poisson(λ) > n) < 10⁻⁶,
 * plus one for each pause whose own chance (item 4) is at least 10⁻⁶, so a correct member
 * exceeds it about once in a million runs.
 *
 * What the model assumes is what SWIM needs to work at all: that dissemination is not
 * saturated, so that news, once made, spreads in s. A storm (suspicions and refutations made
 * faster than gossip can carry them) breaks exactly that, and so the bound catches it: under
 * loss alone it allows no false death at all.
 */
import { assert } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import {
  swimSuspicionConfirmationsWanted, swimSuspicionMaxMs, swimSuspicionMinMs, type SwimConfig,
} from '../../../core/swim/index.js';
import type { NetworkFaults } from '../../sim-network.js';

/** The allowed false-alarm rate of the bound per run. */
export const FALSE_DEAD_BOUND_ALPHA = 1e-6;

/** A stretch of time with constant network-wide faults. */
export interface NetworkStretch {
  readonly durationMs: number;
  readonly faults: NetworkFaults;
}

/** A fault of one member: paused, or reading its messages late (starved CPU). */
export type MemberFault =
  | { readonly kind: 'pause'; readonly member: NodeId; readonly durationMs: number }
  | { readonly kind: 'slow'; readonly member: NodeId; readonly durationMs: number;
    readonly inboundDelayMs: number };

export interface FalseDeadModel {
  readonly config: SwimConfig;
  /** Members in the cluster (the run's size; crashed ones are counted too: conservative). */
  readonly members: number;
  /** The network's faults over the run, stretch by stretch. */
  readonly stretches: readonly NetworkStretch[];
  /** Members whose links lose more, both ways, the whole run. */
  readonly badLinks: readonly { readonly member: NodeId; readonly lossRateExtra: number }[];
  readonly memberFaults: readonly MemberFault[];
}

export interface FalseDeadBound {
  /** Expected lives wrongly ended (λ plus every pause's chance). */
  readonly expected: number;
  /** Most lives a correct member may end in this run. */
  readonly allowed: number;
}

export function falseDeadBound(model: FalseDeadModel): FalseDeadBound {
  const lambda = expectedFalseDeaths(model);
  const pauses = pauseChances(model);
  const likely = pauses.filter((chance) => chance >= FALSE_DEAD_BOUND_ALPHA).length;
  return {
    expected: lambda + pauses.reduce((sum, chance) => sum + chance, 0),
    allowed: poissonUpperQuantile(lambda, FALSE_DEAD_BOUND_ALPHA) + likely,
  };
}

/** Each pause's chance of ending its member's life (item 4). */
export function pauseChances(model: FalseDeadModel): number[] {
  const base = model.stretches[0]?.faults;
  if (base === undefined) return [];
  const extra = new Map(model.badLinks.map((b) => [b.member, b.lossRateExtra]));
  const out: number[] = [];
  for (const fault of model.memberFaults) {
    if (fault.kind !== 'pause') continue;
    const own = Math.min(0.99, base.lossRate + (extra.get(fault.member) ?? 0));
    out.push(pauseDeaths(model, base, own, fault.durationMs));
  }
  return out;
}

/** λ of the module comment: lives ended through failed probes (pauses apart). */
export function expectedFalseDeaths(model: FalseDeadModel): number {
  const extra = new Map(model.badLinks.map((b) => [b.member, b.lossRateExtra]));
  const p = model.config.probeIntervalMs;
  let lambda = 0;
  for (const stretch of model.stretches) {
    const periods = stretch.durationMs / p;
    const f = stretch.faults;
    const healthy = Math.max(0, model.members - extra.size);
    lambda += healthy * periods * deathPerProbe(model, f, f.lossRate, 0);
    for (const e of extra.values()) {
      lambda += periods * deathPerProbe(model, f, Math.min(0.99, f.lossRate + e), 0);
    }
  }
  const base = model.stretches[0]?.faults;
  if (base !== undefined) {
    for (const fault of model.memberFaults) {
      if (fault.kind !== 'slow') continue;
      const own = Math.min(0.99, base.lossRate + (extra.get(fault.member) ?? 0));
      lambda += (fault.durationMs / p) * deathPerProbe(model, base, own, fault.inboundDelayMs);
    }
  }
  return lambda;
}

/** One pause: every probe in it fails, and X refutes only afterwards (item 4). */
function pauseDeaths(
  model: FalseDeadModel, faults: NetworkFaults, ownLoss: number, durationMs: number,
): number {
  const c = model.config;
  const minMs = swimSuspicionMinMs(c, model.members);
  const windowMs = minMs + c.probeIntervalMs - durationMs - 2 * spreadMs(model, faults);
  return Math.min(1, (durationMs / c.probeIntervalMs) * refutationMissed(c, ownLoss, windowMs));
}

/** q · m for one probe of X (items 1 to 3). */
function deathPerProbe(
  model: FalseDeadModel, faults: NetworkFaults, ownLoss: number, readDelayMs: number,
): number {
  const c = model.config;
  const p = c.probeIntervalMs;
  const direct = (1 - ownLoss) ** 2 * latencyWithin(faults, 2, p - readDelayMs);
  const relay = (1 - faults.lossRate) ** 2 * (1 - ownLoss) ** 2
    * latencyWithin(faults, 4, p - c.probeTimeoutMs - readDelayMs);
  const q = (1 - direct) * (1 - relay) ** c.indirectChecks;
  if (q === 0) return 0;
  const slackMs = 2 * spreadMs(model, faults) + readDelayMs;
  const minMs = swimSuspicionMinMs(c, model.members);
  const missAtMin = refutationMissed(c, ownLoss, minMs - slackMs);
  if (!c.lifeguard) return q * missAtMin;
  const maxMs = swimSuspicionMaxMs(c, model.members);
  const wanted = swimSuspicionConfirmationsWanted(c, model.members);
  const confirmed = wanted === 0 ? 1 : binomialAtLeast(Math.floor(maxMs / p), q, wanted);
  return q * Math.min(1, refutationMissed(c, ownLoss, maxMs - slackMs) + confirmed * missAtMin);
}

/** m: no chance to refute got through in a window of `windowMs` (item 2). */
function refutationMissed(config: SwimConfig, ownLoss: number, windowMs: number): number {
  if (windowMs <= 0) return 1;
  const chances = windowMs * (1 / config.probeIntervalMs
    + config.gossipFanout / (2 * config.gossipIntervalMs));
  return (1 - (1 - ownLoss) ** 2) ** chances;
}

/** s: how long news takes to reach everyone, in gossip rounds of one hop each (item 2). */
function spreadMs(model: FalseDeadModel, faults: NetworkFaults): number {
  const c = model.config;
  const rounds = Math.ceil(Math.log(Math.max(2, model.members)) / Math.log(c.gossipFanout + 1));
  return rounds * (c.gossipIntervalMs + faults.latencyMsMin + faults.latencyMsMeanExtra);
}

/** P(Binomial(n, p) ≥ k). */
export function binomialAtLeast(n: number, p: number, k: number): number {
  if (k <= 0 || p >= 1) return n >= k ? 1 : 0;
  if (n < k || p <= 0) return 0;
  let below = 0;
  let term = (1 - p) ** n;
  for (let i = 0; i < k; i++) {
    below += term;
    term *= ((n - i) / (i + 1)) * (p / (1 - p));
  }
  return Math.max(0, Math.min(1, 1 - below));
}
/**
 * Gₙ(w): the probability that n independent latencies (floor `latencyMsMin` plus an
 * exponential part of mean `latencyMsMeanExtra`; the cap is ignored, which only lowers Gₙ, so
 * the bound stays an upper bound) add up to at most `windowMs`. The sum of n exponentials is
 * an Erlang distribution.
 */
export function latencyWithin(faults: NetworkFaults, n: number, windowMs: number): number {
  const slack = windowMs - n * faults.latencyMsMin;
  if (slack <= 0) return 0;
  const mean = faults.latencyMsMeanExtra;
  if (mean <= 0) return 1;
  const y = slack / mean;
  let term = 1;
  let tail = 1;
  for (let i = 1; i < n; i++) {
    term *= y / i;
    tail += term;
  }
  return Math.max(0, 1 - Math.exp(-y) * tail);
}

/** The smallest n with P(Poisson(λ) > n) < alpha. */
export function poissonUpperQuantile(lambda: number, alpha: number): number {
  assert(lambda >= 0 && Number.isFinite(lambda), () => `poisson mean: ${lambda}`);
  assert(alpha > 0 && alpha < 1, () => `poisson alpha: ${alpha}`);
  // Far in the tail a normal approximation with a wide margin is enough (and cheap).
  if (lambda > 500) return Math.ceil(lambda + 6 * Math.sqrt(lambda));
  let term = Math.exp(-lambda);
  let cumulative = term;
  let n = 0;
  while (1 - cumulative >= alpha) {
    n++;
    term *= lambda / n;
    cumulative += term;
    if (n > 10_000) break;
  }
  return n;
}
