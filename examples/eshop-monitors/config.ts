/**
 * The example's numbers: how monitors check services and hold leadership, and how the scenario
 * runner sets up the consistent core and paces a run. The defaults are the "demo on loopback"
 * profile: everything happens within seconds on a shared 2-core machine. For real services,
 * scale them up (a LAN: health checks every second, PHI_ACCRUAL_DEFAULTS_LAN, a 10 s lease).
 */
import {
  PHI_ACCRUAL_DEFAULTS_LOCAL, validatePhiAccrualDetectorConfig, type ConfigProblem,
  type PhiAccrualDetectorConfig,
} from 'conclave';

export interface MonitorConfig {
  /**
   * How often a monitor polls each service's GET /health; each answer is one heartbeat for the
   * failure detector.
   * Unit: ms. Default: 100 (the detector's LOCAL profile expects 100 ms heartbeats).
   * Trade-off: shorter detects sooner, at one request per service per interval per monitor.
   */
  readonly healthIntervalMs: number;
  /**
   * How long one health request may stay unanswered before it is dropped. A hung service
   * never answers; the detector sees no heartbeats and its suspicion grows.
   * Unit: ms. Default: 250 (loopback answers take about 1 ms; a loaded machine needs slack).
   * Must not exceed the detector's acceptable pause, or one slow answer alone would look
   * like a failure.
   */
  readonly healthTimeoutMs: number;
  /**
   * The failure detector's settings. Default: PHI_ACCRUAL_DEFAULTS_LOCAL (threshold 8, 300 ms
   * acceptable pause: a service silent about 450 ms after steady 100 ms answers is declared
   * down). Why phi accrual: a restart is destructive, and phi learns each service's own
   * rhythm, so a service that answers slowly under load gets more slack than a fast one
   * before it is declared down (a fixed timeout is wrong for one of them).
   */
  readonly detector: PhiAccrualDetectorConfig;
  /**
   * A health tick this much later than planned means the monitor itself was stalled (a GC
   * pause, a stopped process, an overloaded machine): the silence it measured is its own, not
   * the services'. It then forgets the silence and counts again from now.
   * Unit: ms. Default: 300 (three ticks; below the ~450 ms detection time, so a monitor's own
   * stall never turns into a false "down").
   */
  readonly selfStallMs: number;
  /**
   * Longest wait for the supervisor's answer to a restart order (it answers once the new
   * instance listens). Unit: ms. Default: 20000 (a process start takes seconds on a loaded
   * machine).
   */
  readonly orderTimeoutMs: number;
  /**
   * Wait before ordering the restart of a still-down service again after an order failed
   * (no answer, supervisor error). Unit: ms. Default: 500.
   */
  readonly orderRetryMs: number;
  /**
   * Core mode: the TTL of the lease behind the monitor's leadership. A leader that stops
   * (crash, pause, partition) is replaced after at most about this long.
   * Unit: ms. Default: 3000 (the task's demo value: ten times the core's election timeout, so
   * a Raft leader change does not cost the monitor its leadership).
   */
  readonly leaseTtlMs: number;
  /**
   * Core mode: the client's `leaseMarginMs`. The leadership's signal aborts this much before
   * the lease's local deadline, and a stall of the monitor's event loop longer than this ends
   * the leadership at once (the lease may have ended meanwhile).
   * Unit: ms. Default: 500 (the client's 100 ms is for a quiet machine: on a loaded 2-core one
   * timers fire a few hundred ms late, and every such stall would cost a needless failover).
   * Must leave most of the TTL: at most leaseTtlMs / 4.
   */
  readonly leaseMarginMs: number;
}

export const MONITOR_DEFAULTS: MonitorConfig = Object.freeze({
  healthIntervalMs: 100,
  healthTimeoutMs: 250,
  detector: PHI_ACCRUAL_DEFAULTS_LOCAL,
  selfStallMs: 300,
  orderTimeoutMs: 20_000,
  orderRetryMs: 500,
  leaseTtlMs: 3_000,
  leaseMarginMs: 500,
});

/** Every rule `config` breaks (empty when valid). */
export function validateMonitorConfig(config: MonitorConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const field of ['healthIntervalMs', 'healthTimeoutMs', 'selfStallMs', 'orderTimeoutMs',
    'orderRetryMs', 'leaseTtlMs', 'leaseMarginMs'] as const) {
    const value = config[field];
    if (!Number.isFinite(value) || value <= 0) {
      problems.push({ field, value, rule: 'must be a finite number > 0' });
    }
  }
  for (const problem of validatePhiAccrualDetectorConfig(config.detector)) {
    problems.push({ ...problem, field: `detector.${problem.field}` });
  }
  if (config.healthTimeoutMs > config.detector.acceptableHeartbeatPauseMs) {
    problems.push({ field: 'healthTimeoutMs', value: config.healthTimeoutMs,
      rule: 'must not exceed detector.acceptableHeartbeatPauseMs '
        + `(${config.detector.acceptableHeartbeatPauseMs})` });
  }
  if (config.leaseMarginMs > config.leaseTtlMs / 4) {
    problems.push({ field: 'leaseMarginMs', value: config.leaseMarginMs,
      rule: `must be at most leaseTtlMs / 4 (${config.leaseTtlMs / 4})` });
  }
  if (config.selfStallMs <= 2 * config.healthIntervalMs) {
    problems.push({ field: 'selfStallMs', value: config.selfStallMs,
      rule: `must exceed 2 × healthIntervalMs (${2 * config.healthIntervalMs}): timer jitter `
        + 'is not a stall' });
  }
  return problems;
}

export interface CoreTiming {
  /**
   * The consistent core's Raft heartbeat (`conclave server --heartbeat-ms`).
   * Unit: ms. Default: 50 (loopback).
   */
  readonly heartbeatMs: number;
  /**
   * The core's election timeout (`--election-timeout-ms`; each member draws from [T, 2T)).
   * Unit: ms. Default: 300 (six heartbeats: a busy 2-core machine delays some of them).
   */
  readonly electionTimeoutMs: number;
}

export const CORE_TIMING_DEFAULTS: CoreTiming = Object.freeze({
  heartbeatMs: 50,
  electionTimeoutMs: 300,
});

export interface ScenarioTiming {
  /**
   * After the failed service was restarted, the run keeps watching this long, so that a late
   * second restart or a late stale order is seen and counted.
   * Unit: ms. Default: 1500 (about three failure detections).
   */
  readonly settleMs: number;
  /**
   * Longest wait for each step of a scenario (a leader, a restart, a rejection) before the run
   * fails. Unit: ms. Default: 30000 (a lease TTL plus process starts on a loaded machine).
   */
  readonly stepDeadlineMs: number;
}

export const SCENARIO_TIMING_DEFAULTS: ScenarioTiming = Object.freeze({
  settleMs: 1_500,
  stepDeadlineMs: 30_000,
});
