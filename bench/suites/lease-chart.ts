/**
 * The lease suite's chart: the write rates (grant, revoke), the keep-alive rates (stream,
 * HTTP), and the servers' CPU with no client and with 1,000 live leases renewed, one bar per
 * system.
 */
import { barPanelsSvg, type BarPanel } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import { SYSTEM_NAMES, type SystemName } from '../lib/wire.js';
import { LEASE_WORKLOAD, type LeasePhaseName, type LeaseRuns } from './lease-model.js';
import { LEASE_PHASE_LABELS, phaseOf } from './lease-summary.js';

export function leaseChart(runs: LeaseRuns): string {
  const systems = SYSTEM_NAMES.filter((s) => runs[s] !== undefined);
  const rates = (title: string, phases: readonly LeasePhaseName[]): BarPanel => ({
    title, categories: phases.map((p) => LEASE_PHASE_LABELS[p]),
    values: Object.fromEntries(systems.map((s) => [s, phases.map((p) =>
      phaseOf(runs, s, p)?.opsPerS)])),
  });
  const live = (s: SystemName): (number | undefined)[] =>
    [runs[s]?.live?.serverCpuPercentIdle, runs[s]?.live?.serverCpuPercent];
  const { inflight, liveLeases, liveTtlS } = LEASE_WORKLOAD;
  return barPanelsSvg({
    title: `lease: ${inflight} in flight, 3 members on loopback, to the leader`,
    subtitle: 'keep-alive stream: WebSocket (Conclave /v1/lease/stream, etcd gateway ' +
      '/v3/lease/keepalive); HTTP: one keep-alive per request',
    series: systems.map((name) => ({ name, colour: SYSTEM_COLOURS[name] })),
    panels: [
      rates('grant and revoke (ops/s, higher is better)', ['grant', 'revoke']),
      rates('keep-alives (ops/s, higher is better)', ['keepalive-stream', 'keepalive-http']),
      {
        title: `${liveLeases} leases, TTL ${liveTtlS} s, renewed at TTL/3\n` +
          '(server CPU %, all 3 members, 100 = one core)',
        categories: ['no client', `${liveLeases} live leases`],
        values: Object.fromEntries(systems.map((s) => [s, live(s)])),
      },
    ],
  });
}
