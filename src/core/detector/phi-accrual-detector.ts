/**
 * The phi accrual failure detector (Hayashibara, Défago, Yared, Katayama, "The φ Accrual Failure
 * Detector", SRDS 2004), computed as Akka and Cassandra do: instead of a yes/no answer it gives
 * phi, the suspicion that a silent peer has failed, on a scale that adapts to each peer's
 * observed heartbeat timing.
 */
import { assert } from '../assert.js';
import { formatConfigProblems } from '../config.js';
import type { NodeId } from '../ids.js';
import {
  PHI_ACCRUAL_DEFAULTS_LAN,
  validatePhiAccrualDetectorConfig,
  type PhiAccrualDetectorConfig,
} from './config.js';
import type { FailureDetector } from './failure-detector.js';
import { IntervalWindow } from './interval-window.js';

/**
 * phi for a silence of `elapsedMs`, when inter-arrival times are taken to be normally
 * distributed with `meanMs` and `stdDeviationMs`: phi = -log10(P(next heartbeat later than
 * elapsed)).
 *
 * The normal tail uses the logistic approximation Akka uses:
 *   y = (elapsed - mean) / stdDev,  e = exp(-y·(1.5976 + 0.070566·y²)),
 *   phi = -log10(e / (1 + e))        when elapsed > mean,
 *   phi = -log10(1 - 1 / (1 + e))    otherwise.
 * Both branches equal log10(1 + exp(z)) with z = y·(1.5976 + 0.070566·y²) (Akka picks the branch
 * that avoids Infinity/Infinity and cancellation); we compute that form as a stable softplus, so
 * phi stays finite where Akka's overflows to Infinity (y above about 22) and becomes +Infinity
 * only when z itself overflows (y above about 10^102). It is never NaN, always >= 0, and
 * non-decreasing in `elapsedMs`.
 */
export function phiOf(elapsedMs: number, meanMs: number, stdDeviationMs: number): number {
  assert(Number.isFinite(elapsedMs) && Number.isFinite(meanMs),
    () => `phi: elapsed and mean must be finite: ${elapsedMs}, ${meanMs}`);
  assert(Number.isFinite(stdDeviationMs) && stdDeviationMs > 0,
    () => `phi: standard deviation must be finite and > 0: ${stdDeviationMs}`);
  const y = (elapsedMs - meanMs) / stdDeviationMs;
  const z = y * (1.5976 + 0.070566 * y * y);
  // softplus(z) = ln(1 + e^z), without overflow for large z or loss for very negative z.
  const softplus = z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
  return softplus / Math.LN10;
}

/** What the detector has learned about one peer, for dashboards and tests. */
export interface PhiPeerStats {
  /** Latest heartbeat, or the `watch` time when the peer has not been heard from. Unit: ms. */
  readonly lastHeartbeatMs: number;
  /** False while the peer is only watched. */
  readonly heardFrom: boolean;
  /** Intervals in the window (including the two seeded by the first heartbeat or watch). */
  readonly sampleCount: number;
  /** Mean of the window, before `acceptableHeartbeatPauseMs` is added. Unit: ms. */
  readonly meanIntervalMs: number;
  /** Population standard deviation of the window, before clamping. Unit: ms. */
  readonly stdDeviationMs: number;
}

interface PhiPeerState {
  readonly window: IntervalWindow;
  lastHeartbeatMs: number;
  heardFrom: boolean;
}

/**
 * Phi accrual failure detector over many peers.
 *
 * Per peer it keeps the last `maxSampleSize` inter-arrival intervals. At time t, with the last
 * heartbeat at `last`, phi = phiOf(t - last, mean + acceptableHeartbeatPauseMs,
 * max(stdDev, minStdDeviationMs)); the peer is available while phi < threshold.
 *
 * Rules (as Akka's detector, plus `watch`):
 * - The first heartbeat (or a `watch`) seeds the window with two intervals, estimate ± estimate/4,
 *   so that mean = `firstHeartbeatEstimateMs` and std dev = estimate/4 before anything is measured.
 * - A heartbeat that arrives while the peer is considered unavailable updates the arrival time
 *   but adds no interval: the long silence that ended would inflate the mean and std dev and slow
 *   down detection of the next failure.
 * - `watch` starts the silence at `nowMs` for a peer not heard from yet, so one that never comes
 *   up is detected. Its first heartbeat then adds no interval (start-up time is not a heartbeat
 *   interval). Unmonitored peers have phi 0 and are available.
 * - Time should come from a monotonic clock; silence is clamped at 0 and a heartbeat older than
 *   the latest one is ignored, so phi never sees a negative interval.
 */
export class PhiAccrualDetector implements FailureDetector {
  readonly config: PhiAccrualDetectorConfig;
  private readonly states = new Map<NodeId, PhiPeerState>();

  constructor(config: PhiAccrualDetectorConfig = PHI_ACCRUAL_DEFAULTS_LAN) {
    const problems = validatePhiAccrualDetectorConfig(config);
    assert(problems.length === 0,
      () => `invalid PhiAccrualDetectorConfig:\n${formatConfigProblems(problems)}`);
    this.config = Object.freeze({ ...config });
  }

  heartbeat(peer: NodeId, nowMs: number): void {
    assertTime(nowMs);
    const state = this.states.get(peer);
    if (state === undefined) {
      this.states.set(peer, this.seededState(nowMs, true));
      return;
    }
    if (nowMs < state.lastHeartbeatMs) return;
    if (state.heardFrom && this.isAvailable(peer, nowMs)) {
      state.window.add(nowMs - state.lastHeartbeatMs);
    }
    state.lastHeartbeatMs = nowMs;
    state.heardFrom = true;
  }

  watch(peer: NodeId, nowMs: number): void {
    assertTime(nowMs);
    if (!this.states.has(peer)) this.states.set(peer, this.seededState(nowMs, false));
  }

  /** The suspicion that `peer` has failed: 0 for unmonitored peers, otherwise >= 0, never NaN. */
  phi(peer: NodeId, nowMs: number): number {
    assertTime(nowMs);
    const state = this.states.get(peer);
    if (state === undefined) return 0;
    const elapsedMs = Math.max(0, nowMs - state.lastHeartbeatMs);
    const meanMs = state.window.meanMs + this.config.acceptableHeartbeatPauseMs;
    const stdDeviationMs = Math.max(state.window.stdDeviationMs, this.config.minStdDeviationMs);
    return phiOf(elapsedMs, meanMs, stdDeviationMs);
  }

  isAvailable(peer: NodeId, nowMs: number): boolean {
    return this.phi(peer, nowMs) < this.config.threshold;
  }

  remove(peer: NodeId): void {
    this.states.delete(peer);
  }

  peers(): NodeId[] {
    return [...this.states.keys()].sort();
  }

  /** What the detector has learned about `peer`; undefined when it is not monitored. */
  stats(peer: NodeId): PhiPeerStats | undefined {
    const state = this.states.get(peer);
    if (state === undefined) return undefined;
    return {
      lastHeartbeatMs: state.lastHeartbeatMs,
      heardFrom: state.heardFrom,
      sampleCount: state.window.count,
      meanIntervalMs: state.window.meanMs,
      stdDeviationMs: state.window.stdDeviationMs,
    };
  }

  private seededState(nowMs: number, heardFrom: boolean): PhiPeerState {
    const estimateMs = this.config.firstHeartbeatEstimateMs;
    const window = new IntervalWindow(this.config.maxSampleSize, estimateMs);
    // Akka's seed: two samples estimate ± estimate/4 give mean = estimate, std dev = estimate/4.
    window.add(estimateMs - estimateMs / 4);
    window.add(estimateMs + estimateMs / 4);
    return { window, lastHeartbeatMs: nowMs, heardFrom };
  }
}

function assertTime(nowMs: number): void {
  assert(Number.isFinite(nowMs), () => `nowMs must be a finite number: ${nowMs}`);
}
