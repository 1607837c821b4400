/**
 * lease: what leases cost. With 256 requests in flight, all to the leader: the grant rate, the
 * keep-alive rate over WebSockets (pipelined, as both systems' client libraries send them) and
 * over plain HTTP (one keep-alive per request), and the revoke rate of the leases just
 * granted. Then the cost of 1,000 live leases of 10 s renewed at TTL/3 over one WebSocket: the
 * servers' CPU with them, next to the same cluster's CPU with no client (the idle baseline).
 * Each phase is a warm-up and a window in a fresh client process, as in the put suite.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchCluster, ClusterTiming } from '../lib/cluster.js';
import { withClusters, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import type { StreamClientOptions } from '../lib/lease-stream-client.js';
import type { LoadClientOptions } from '../lib/load-client.js';
import {
  describeWindow, LEASE_STREAM_CLIENT, LOAD_CLIENT, measureClient, measureIdle,
  serverCpuPercent, windowFigures, type MeasuredWindow,
} from '../lib/measure.js';
import type { RequestKind } from '../lib/requests.js';
import { fmt } from '../lib/stats.js';
import { PUT_WORKLOAD, type SystemName } from '../lib/wire.js';
import { leaseChart } from './lease-chart.js';
import {
  LEASE_PHASES, LEASE_WORKLOAD, type LeasePhase, type LeasePhaseName, type LeaseRun,
  type LeaseRuns, type LiveLeases,
} from './lease-model.js';
import { leaseFinalLine, leaseRatios } from './lease-summary.js';

/** etcd's defaults, which Conclave shares. */
const LEASE_TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });

export const leaseSuite: Suite = {
  name: 'lease',
  summary: 'grant, keep-alive, revoke rates at 256 in flight; CPU of 1,000 live leases',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const runs = await measureAll(context);
    const figures = {
      suite: 'lease', timing: LEASE_TIMING, workload: LEASE_WORKLOAD, target: 'leader',
      warmupMs: context.options.warmupMs, windowMs: context.options.windowMs, runs,
      ratios: leaseRatios(runs),
    };
    return { finalLine: leaseFinalLine(runs), figures, chartSvg: leaseChart(runs) };
  },
};

async function measureAll(context: BenchContext): Promise<LeaseRuns> {
  const runs: Partial<Record<SystemName, LeaseRun>> = {};
  await withClusters(context, LEASE_TIMING, 'lease', async (cluster) => {
    runs[cluster.system] = { phases: [], live: undefined };
  }, async (clusters) => {
    // The systems take turns at each phase, in alternating order (see the put suite).
    context.progress.plan((LEASE_PHASES.length + 1) * clusters.length);
    for (const [i, phase] of LEASE_PHASES.entries()) {
      for (const cluster of i % 2 === 0 ? clusters : [...clusters].reverse()) {
        const measured = await measurePhase(context, cluster, phase);
        context.progress.step(`lease: ${cluster.system} ${phase}: ` +
          describeWindow(measured, 'op'));
        runs[cluster.system]!.phases.push(measured);
      }
    }
    for (const cluster of LEASE_PHASES.length % 2 === 0 ? clusters : [...clusters].reverse()) {
      const live = await measureLive(context, cluster);
      context.progress.step(`lease: ${cluster.system} ${live.leases} live leases: ` +
        `server CPU ${fmt(live.serverCpuPercent)} % (idle ${fmt(live.serverCpuPercentIdle)} %), ` +
        `${fmt(live.renewalsPerS)} renewals/s, errors ${live.errors}`);
      runs[cluster.system]!.live = live;
    }
  });
  return runs;
}

/** One rate phase in a fresh client process. */
async function measurePhase(context: BenchContext, cluster: BenchCluster,
  phase: LeasePhaseName): Promise<LeasePhase> {
  const leader = await cluster.waitHealthy();
  const { warmupMs, windowMs } = context.options;
  const { inflight } = LEASE_WORKLOAD;
  const leaseIdsFile = poolFile(context, cluster.system);
  const load = (kind: RequestKind, warmup: number): LoadClientOptions => ({
    system: cluster.system, endpoint: leader.clientHostPort, inflight, warmupMs: warmup,
    windowMs, ...PUT_WORKLOAD, kind, leaseTtlS: LEASE_WORKLOAD.poolTtlS,
    ...(kind === 'lease-grant' ? {} : { leaseIdsFile }),
  });
  let measured: MeasuredWindow;
  const label = `lease ${phase}`;
  switch (phase) {
    case 'grant':
      measured = await measureClient(context, cluster, leader.name, label, LOAD_CLIENT,
        load('lease-grant', warmupMs));
      // The keep-alive and revoke phases work on the leases granted here.
      writeFileSync(leaseIdsFile, JSON.stringify(measured.result.leaseIds));
      break;
    case 'keepalive-stream': {
      const streams = LEASE_WORKLOAD.keepAliveStreams;
      const options: StreamClientOptions = {
        system: cluster.system, endpoint: leader.clientHostPort, mode: 'closed-loop',
        connections: streams, inflightPerConnection: Math.ceil(inflight / streams),
        leaseIdsFile, leases: 0, leaseTtlS: LEASE_WORKLOAD.poolTtlS, warmupMs, windowMs,
      };
      measured = await measureClient(context, cluster, leader.name, label, LEASE_STREAM_CLIENT,
        options);
      break;
    }
    case 'keepalive-http':
      measured = await measureClient(context, cluster, leader.name, label, LOAD_CLIENT,
        load('lease-keepalive', warmupMs));
      break;
    case 'revoke':
      measured = await measureClient(context, cluster, leader.name, label, LOAD_CLIENT,
        load('lease-revoke', Math.min(warmupMs, LEASE_WORKLOAD.revokeWarmupMsMax)));
      break;
  }
  return { phase, inflight, ...windowFigures(measured) };
}

/** The idle baseline, then 1,000 leases renewed at TTL/3 over one WebSocket. */
async function measureLive(context: BenchContext, cluster: BenchCluster): Promise<LiveLeases> {
  const leader = await cluster.waitHealthy();
  const { windowMs } = context.options;
  const idleProcesses = await measureIdle(cluster, leader.name, windowMs);
  const options: StreamClientOptions = {
    system: cluster.system, endpoint: leader.clientHostPort, mode: 'renew', connections: 1,
    inflightPerConnection: 0, leases: LEASE_WORKLOAD.liveLeases,
    leaseTtlS: LEASE_WORKLOAD.liveTtlS, warmupMs: 0, windowMs,
  };
  const m = await measureClient(context, cluster, leader.name, 'lease live', LEASE_STREAM_CLIENT,
    options);
  const idle = serverCpuPercent(idleProcesses);
  const busy = serverCpuPercent(m.processes);
  return {
    leases: LEASE_WORKLOAD.liveLeases, ttlS: LEASE_WORKLOAD.liveTtlS,
    renewalsPerS: (m.result.ops * 1000) / m.result.windowMs, errors: m.result.errors,
    firstError: m.result.firstError, latency: m.result.latency, idleProcesses,
    processes: m.processes, serverCpuPercentIdle: idle, serverCpuPercent: busy,
    serverCpuPercentForLeases: busy - idle,
  };
}

function poolFile(context: BenchContext, system: SystemName): string {
  return join(context.workDir, `lease-ids-${system}.json`);
}
