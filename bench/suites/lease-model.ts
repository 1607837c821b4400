/**
 * What the lease suite measures and the shape of its figures, shared by the suite
 * (lease.ts), its final line (lease-summary.ts) and its chart (lease-chart.ts).
 */
import type { ProcessCpu, WindowFigures } from '../lib/measure.js';
import type { LatencySummary } from '../lib/stats.js';
import type { SystemName } from '../lib/wire.js';

export const LEASE_WORKLOAD = Object.freeze({
  /** Requests in flight in the rate phases (the keep-alive level). */
  inflight: 256,
  /**
   * WebSockets carrying the pipelined keep-alives; inflight / streams lanes on each, every lane
   * renewing its own lease. One, as both client libraries keep one stream for all their leases.
   */
  keepAliveStreams: 1,
  /**
   * TTL of the leases granted in the rate phases. Unit: s. Default: 600, longer than the phases
   * from grant to revoke, so none expires before its revoke is measured.
   */
  poolTtlS: 600,
  /** Live leases in the last phase. */
  liveLeases: 1_000,
  /**
   * Their TTL. Unit: s. Default: 10 (above Conclave's minimum of 6.2 s with a 1 s election
   * timeout, and etcd's of 1.5 s), so 300 keep-alives a second for 1,000 leases at TTL/3.
   */
  liveTtlS: 10,
  /** The revoke phase's warm-up at most (it uses up the leases it revokes). Unit: ms. */
  revokeWarmupMsMax: 1_000,
});

export const LEASE_PHASES = ['grant', 'keepalive-stream', 'keepalive-http', 'revoke'] as const;
export type LeasePhaseName = (typeof LEASE_PHASES)[number];

export interface LeasePhase extends WindowFigures {
  readonly phase: LeasePhaseName;
  readonly inflight: number;
}

export interface LiveLeases {
  readonly leases: number;
  /** Unit: s. */
  readonly ttlS: number;
  /** Keep-alives answered (lease alive) per second in the window. */
  readonly renewalsPerS: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  readonly latency: LatencySummary;
  /** The servers with no client, just before. */
  readonly idleProcesses: readonly ProcessCpu[];
  readonly processes: readonly ProcessCpu[];
  /** All servers together, no client (100 = one core). Unit: %. */
  readonly serverCpuPercentIdle: number;
  /** All servers together, with the leases renewed. Unit: %. */
  readonly serverCpuPercent: number;
  /** serverCpuPercent − serverCpuPercentIdle: what the live leases cost. Unit: %. */
  readonly serverCpuPercentForLeases: number;
}

export interface LeaseRun {
  readonly phases: LeasePhase[];
  live: LiveLeases | undefined;
}

export type LeaseRuns = Partial<Record<SystemName, LeaseRun>>;
