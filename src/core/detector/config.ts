/**
 * Configuration of the two failure detectors: the fields, the named default profiles and the
 * validators, which report every violated rule at once.
 */
import type { ConfigProblem } from '../config.js';

/** A fixed-timeout detector: a peer is unavailable once it has been silent for `timeoutMs`. */
export interface TimeoutDetectorConfig {
  /**
   * How often the monitored peer sends a heartbeat. The detector does not schedule anything
   * itself; the value is here so that validation can check `timeoutMs` against it and so that
   * dashboards can show it next to the suspicion level.
   * Unit: ms. Default: 1000 (LAN), 100 (LOCAL).
   * Trade-off: shorter intervals detect failures sooner but cost more background traffic.
   */
  readonly heartbeatIntervalMs: number;
  /**
   * How long a peer may stay silent before it is declared unavailable. The HeartBeat pattern
   * suggests about 3 × `heartbeatIntervalMs`: a peer is declared only after missing about
   * three heartbeats in a row, so one lost or late message does not cause a false alarm.
   * Must exceed `heartbeatIntervalMs`, or a healthy peer would flap between two heartbeats.
   * Unit: ms. Default: 3000 (LAN), 300 (LOCAL).
   * Trade-off: too short gives false alarms under congestion or GC pauses; too long leaves a
   * dead peer in service for longer.
   */
  readonly timeoutMs: number;
}

/**
 * The phi accrual detector (Hayashibara et al. 2004, computed as Akka does): it learns the
 * distribution of heartbeat inter-arrival times and reports how unlikely the current silence
 * is, as phi = -log10(P(a heartbeat arrives later than now)).
 */
export interface PhiAccrualDetectorConfig {
  /**
   * Phi at or above which the peer is declared unavailable. phi = 1 means about a 10% chance
   * that the silence is normal, phi = 8 about 1 in 10^8 (under the model's assumptions).
   * Unit: none (phi). Default: 8 (LAN and LOCAL).
   * Why 8: Akka Cluster's default (`akka.cluster.failure-detector.threshold`); Cassandra's
   * `phi_convict_threshold` is the same number. Lower detects sooner with more false alarms;
   * 12 or more suits clouds with noisy networks.
   */
  readonly threshold: number;
  /**
   * Number of most recent inter-arrival intervals the detector remembers per peer. Older ones
   * are dropped, so the estimate follows changes in the network. Must be an integer of at least
   * 2 (the first heartbeat seeds two samples) and at most `PHI_SAMPLE_SIZE_LIMIT`.
   * Unit: samples. Default: 1000 (LAN: about 17 minutes of history at 1 s heartbeats, Akka's
   * default), 200 (LOCAL: 20 s of history at 100 ms heartbeats, short enough that a test or a
   * simulated run sees the estimate adapt).
   * Trade-off: memory (8 bytes per sample per peer) and slower adaptation against a steadier
   * estimate.
   */
  readonly maxSampleSize: number;
  /**
   * Lower bound on the standard deviation used in the phi formula. Very regular heartbeats
   * would otherwise make the distribution so narrow that a few milliseconds of jitter sends
   * phi over the threshold.
   * Unit: ms. Default: 100 (LAN, Akka's default: a tenth of the interval), 10 (LOCAL: the same
   * tenth of a 100 ms interval).
   */
  readonly minStdDeviationMs: number;
  /**
   * Silence that is tolerated on top of the learned mean interval: it is added to the mean
   * before phi is computed. It absorbs GC pauses and transient network hiccups.
   * Unit: ms. Default: 3000 (LAN, Akka's `acceptable-heartbeat-pause`: three intervals, the
   * same margin as the HeartBeat pattern's 3 × interval), 300 (LOCAL: three 100 ms intervals).
   * May be 0. Trade-off: detection time grows by exactly this amount.
   */
  readonly acceptableHeartbeatPauseMs: number;
  /**
   * Guess of the heartbeat interval, used before any interval has been measured: the first
   * heartbeat (or `watch`) seeds the window with mean = this value and a standard deviation of
   * a quarter of it, as Akka does.
   * Unit: ms. Default: 1000 (LAN: the heartbeat interval), 100 (LOCAL: the same).
   * Set it to the sender's heartbeat interval.
   */
  readonly firstHeartbeatEstimateMs: number;
}

/**
 * Upper bound on `maxSampleSize`, so that a typo cannot make every peer's window take
 * megabytes (100 000 samples is 800 kB per peer, and over a day of 1 s heartbeats).
 */
export const PHI_SAMPLE_SIZE_LIMIT = 100_000;

/** Machines on one LAN, heartbeats every second (the HeartBeat pattern's example). */
export const TIMEOUT_DETECTOR_DEFAULTS_LAN: TimeoutDetectorConfig = Object.freeze({
  heartbeatIntervalMs: 1000,
  timeoutMs: 3000,
});

/** Loopback clusters, tests and simulations: the LAN profile scaled down tenfold. */
export const TIMEOUT_DETECTOR_DEFAULTS_LOCAL: TimeoutDetectorConfig = Object.freeze({
  heartbeatIntervalMs: 100,
  timeoutMs: 300,
});

/**
 * Akka Cluster's defaults, for 1 s heartbeats on a LAN. A peer that stops after steady 1 s
 * heartbeats is declared after about 4.52 s of silence (mean 1000 + pause 3000, std dev clamped
 * to 100, phi reaches 8 at y ≈ 5.23 std devs); one that sent a single heartbeat, after 5.31 s.
 */
export const PHI_ACCRUAL_DEFAULTS_LAN: PhiAccrualDetectorConfig = Object.freeze({
  threshold: 8,
  maxSampleSize: 1000,
  minStdDeviationMs: 100,
  acceptableHeartbeatPauseMs: 3000,
  firstHeartbeatEstimateMs: 1000,
});

/**
 * The LAN profile scaled for 100 ms heartbeats (loopback, tests, simulation): a peer that stops
 * after steady heartbeats is declared after about 452 ms of silence (531 ms after a single one).
 */
export const PHI_ACCRUAL_DEFAULTS_LOCAL: PhiAccrualDetectorConfig = Object.freeze({
  threshold: 8,
  maxSampleSize: 200,
  minStdDeviationMs: 10,
  acceptableHeartbeatPauseMs: 300,
  firstHeartbeatEstimateMs: 100,
});

/** Every rule `config` breaks; empty when it is valid. */
export function validateTimeoutDetectorConfig(
  config: TimeoutDetectorConfig,
): readonly ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const interval = config.heartbeatIntervalMs;
  const timeout = config.timeoutMs;
  checkPositive(problems, 'heartbeatIntervalMs', interval);
  checkPositive(problems, 'timeoutMs', timeout);
  if (isPositive(interval) && isPositive(timeout) && timeout <= interval) {
    problems.push({
      field: 'timeoutMs,heartbeatIntervalMs',
      value: { timeoutMs: timeout, heartbeatIntervalMs: interval },
      rule: 'timeoutMs must exceed heartbeatIntervalMs (about 3 × is usual), '
        + 'or a healthy peer is declared unavailable between two heartbeats',
    });
  }
  return problems;
}

/** Every rule `config` breaks; empty when it is valid. */
export function validatePhiAccrualDetectorConfig(
  config: PhiAccrualDetectorConfig,
): readonly ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  checkPositive(problems, 'threshold', config.threshold);
  const size = config.maxSampleSize;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 2
    || size > PHI_SAMPLE_SIZE_LIMIT) {
    problems.push({
      field: 'maxSampleSize',
      value: size,
      rule: `must be an integer in [2, ${PHI_SAMPLE_SIZE_LIMIT}]`,
    });
  }
  checkPositive(problems, 'minStdDeviationMs', config.minStdDeviationMs);
  const pause = config.acceptableHeartbeatPauseMs;
  if (typeof pause !== 'number' || !Number.isFinite(pause) || pause < 0) {
    problems.push({
      field: 'acceptableHeartbeatPauseMs',
      value: pause,
      rule: 'must be a finite number >= 0',
    });
  }
  checkPositive(problems, 'firstHeartbeatEstimateMs', config.firstHeartbeatEstimateMs);
  return problems;
}

function isPositive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

function checkPositive(problems: ConfigProblem[], field: string, value: unknown): void {
  if (!isPositive(value)) problems.push({ field, value, rule: 'must be a finite number > 0' });
}
