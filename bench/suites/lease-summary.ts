/**
 * The lease suite's final line and ratios: the four rates (grant, keep-alive over a stream,
 * keep-alive over HTTP, revoke), the servers' CPU per operation, and what 1,000 live leases
 * cost above the idle cluster.
 */
import { comparePart, referenceHint } from '../lib/final-line.js';
import { ratio } from '../lib/stats.js';
import type { SystemName } from '../lib/wire.js';
import {
  LEASE_PHASES, LEASE_WORKLOAD, type LeasePhase, type LeasePhaseName, type LeaseRuns,
} from './lease-model.js';

/** How each phase is named in the final line and the chart. */
export const LEASE_PHASE_LABELS: Readonly<Record<LeasePhaseName, string>> = Object.freeze({
  'grant': 'grant',
  'keepalive-stream': 'keep-alive stream',
  'keepalive-http': 'keep-alive HTTP',
  'revoke': 'revoke',
});

export interface LeaseRatios {
  /** Conclave's over etcd's, per phase: above 1 Conclave does more per second. */
  readonly opsPerS: Readonly<Record<LeasePhaseName, number>>;
  /** Conclave's over etcd's, per phase: above 1 Conclave's servers burn more CPU per op. */
  readonly serverCpuUsPerOp: Readonly<Record<LeasePhaseName, number>>;
  /** Conclave's over etcd's CPU above idle with the live leases: above 1 Conclave costs more. */
  readonly serverCpuPercentForLeases: number;
}

export function phaseOf(runs: LeaseRuns, system: SystemName,
  phase: LeasePhaseName): LeasePhase | undefined {
  return runs[system]?.phases.find((p) => p.phase === phase);
}

export function leaseRatios(runs: LeaseRuns): LeaseRatios {
  const per = (pick: (p: LeasePhase) => number): Record<LeasePhaseName, number> =>
    Object.fromEntries(LEASE_PHASES.map((phase) => {
      const c = phaseOf(runs, 'conclave', phase);
      const e = phaseOf(runs, 'etcd', phase);
      return [phase, ratio(c === undefined ? undefined : pick(c),
        e === undefined ? undefined : pick(e))];
    })) as Record<LeasePhaseName, number>;
  return {
    opsPerS: per((p) => p.opsPerS),
    serverCpuUsPerOp: per((p) => p.serverCpuUsPerOp),
    serverCpuPercentForLeases: ratio(runs.conclave?.live?.serverCpuPercentForLeases,
      runs.etcd?.live?.serverCpuPercentForLeases),
  };
}

/** `lease (...): ops/s grant/... conclave a/b/c/d, etcd e/f/g/h, conclave/etcd ...; ...` */
export function leaseFinalLine(runs: LeaseRuns): string {
  const hasEtcd = runs.etcd !== undefined;
  const phases = (pick: (p: LeasePhase) => number) => (system: SystemName) =>
    LEASE_PHASES.map((phase) => {
      const p = phaseOf(runs, system, phase);
      return p === undefined ? undefined : pick(p);
    });
  const both = (label: string, values: (system: SystemName) => (number | undefined)[]): string =>
    comparePart(label, values('conclave'), hasEtcd ? values('etcd') : undefined);
  const names = LEASE_PHASES.map((p) => LEASE_PHASE_LABELS[p]).join('/');
  const { inflight, liveLeases, liveTtlS } = LEASE_WORKLOAD;
  return `lease (${inflight} in flight, 3 members, to the leader): ` +
    `${both(`ops/s ${names}`, phases((p) => p.opsPerS))}; ` +
    `${both('server CPU µs/op', phases((p) => p.serverCpuUsPerOp))}; ` +
    `${liveLeases} live leases (TTL ${liveTtlS} s, renewed at TTL/3): ` +
    `${both('server CPU % above idle', (s) => [runs[s]?.live?.serverCpuPercentForLeases])}, ` +
    `${both('idle server CPU %', (s) => [runs[s]?.live?.serverCpuPercentIdle])}` +
    referenceHint(hasEtcd);
}
