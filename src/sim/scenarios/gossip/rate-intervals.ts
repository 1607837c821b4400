/**
 * Exact confidence intervals for event rates, for comparing false deaths with Lifeguard on and
 * off on the same seeds: a count k over an exposure (member-hours) is Poisson; its interval is
 * Garwood's (the Poisson CDF inverted), and the ratio of two rates is bounded through the
 * binomial split of the two counts (Clopper-Pearson on k₁ / (k₁ + k₂), conditional on the
 * total), which needs no normal approximation, so it holds for the small counts a good
 * detector gives.
 */
import { assert } from '../../../core/assert.js';

export interface Interval {
  readonly low: number;
  readonly high: number;
}

/** Two-sided `level` interval of a Poisson mean from one observed count `k`. */
export function poissonMeanInterval(k: number, level = 0.95): Interval {
  assert(Number.isInteger(k) && k >= 0, () => `poisson count: ${k}`);
  const tail = (1 - level) / 2;
  // low: P(X ≥ k | μ) = tail; high: P(X ≤ k | μ) = tail. Both monotone in μ.
  const low = k === 0 ? 0 : bisect((mu) => 1 - poissonCdf(k - 1, mu) - tail, 0, k + 10);
  const high = bisect((mu) => tail - poissonCdf(k, mu), 0, 10 * k + 20);
  return { low, high };
}

/** The rate's interval per `per` units of exposure (for example per 100 member-hours). */
export function rateInterval(k: number, exposure: number, per: number, level = 0.95): Interval {
  assert(exposure > 0, () => `exposure must be > 0: ${exposure}`);
  const mean = poissonMeanInterval(k, level);
  return { low: (per * mean.low) / exposure, high: (per * mean.high) / exposure };
}

/**
 * Interval of (rate₁ / rate₂) from counts k₁, k₂ over exposures t₁, t₂. `high` is Infinity
 * when k₂ is 0, `low` is 0 when k₁ is 0.
 */
export function rateRatioInterval(
  k1: number, t1: number, k2: number, t2: number, level = 0.95,
): Interval {
  const n = k1 + k2;
  if (n === 0) return { low: 0, high: Infinity };
  const tail = (1 - level) / 2;
  // Clopper-Pearson bounds of the binomial share p = k1 / n.
  const pLow = k1 === 0 ? 0 : bisect((p) => binomialTail(k1, n, p) - tail, 0, 1);
  const pHigh = k1 === n ? 1 : bisect((p) => tail - binomialCdf(k1, n, p), 0, 1);
  const toRatio = (p: number): number => (p >= 1 ? Infinity : (p / (1 - p)) * (t2 / t1));
  return { low: toRatio(pLow), high: toRatio(pHigh) };
}

function poissonCdf(k: number, mu: number): number {
  if (k < 0) return 0;
  if (mu <= 0) return 1;
  // In logs: exp(-mu) underflows to 0 above mu ≈ 745, which made every count of more than a
  // few hundred (a Lifeguard-off storm: 6,992 on seed 3 at 1,000 members) get a wrong interval.
  let logTerm = -mu;
  let logSum = logTerm;
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log(mu / i);
    const high = Math.max(logSum, logTerm);
    logSum = high + Math.log(Math.exp(logSum - high) + Math.exp(logTerm - high));
  }
  return Math.min(1, Math.exp(logSum));
}

function binomialCdf(k: number, n: number, p: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  let sum = 0;
  for (let i = 0; i <= k; i++) sum += binomialPmf(i, n, p);
  return Math.min(1, sum);
}

/** P(X ≥ k). */
function binomialTail(k: number, n: number, p: number): number {
  return 1 - binomialCdf(k - 1, n, p);
}

function binomialPmf(i: number, n: number, p: number): number {
  if (p <= 0) return i === 0 ? 1 : 0;
  if (p >= 1) return i === n ? 1 : 0;
  return Math.exp(logChoose(n, i) + i * Math.log(p) + (n - i) * Math.log(1 - p));
}

function logChoose(n: number, k: number): number {
  let sum = 0;
  for (let i = 1; i <= k; i++) sum += Math.log((n - k + i) / i);
  return sum;
}

/** The root of an increasing-or-decreasing `f` on [a, b] (sign change assumed). */
function bisect(f: (x: number) => number, a: number, b: number): number {
  let lo = a;
  let hi = b;
  const fLo = f(lo);
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if ((f(mid) > 0) === (fLo > 0)) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
