/**
 * put: etcd's published write benchmark. 8-byte keys drawn at random from 100,000, 256-byte
 * values, closed loop with 1, 64 and 256 requests in flight, all sent to the leader. For each
 * level: a warm-up, then a fixed window; ops/s, latency p50/p99/p99.9, and the CPU each server
 * and the client process used in the window (per second and per acknowledged put).
 */
import type { BenchCluster, ClusterTiming } from '../lib/cluster.js';
import { withClusters, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import type { LoadClientOptions } from '../lib/load-client.js';
import {
  describeWindow, LOAD_CLIENT, measureClient, windowFigures, type WindowFigures,
} from '../lib/measure.js';
import { fmt, ratio } from '../lib/stats.js';
import { PUT_WORKLOAD, type SystemName } from '../lib/wire.js';
import { benchToken } from '../lib/auth-setup.js';
import { putChart } from './put-chart.js';

/** etcd's defaults, which Conclave shares. */
const PUT_TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });

export interface PutLevel extends WindowFigures {
  readonly inflight: number;
}

export type PutRuns = Partial<Record<SystemName, readonly PutLevel[]>>;

export const putSuite: Suite = {
  name: 'put',
  summary: 'closed-loop puts, 1/64/256 in flight: ops/s, p50/p99/p99.9, CPU of servers and client',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const runs = await measureAll(context);
    const figures = {
      suite: 'put', timing: PUT_TIMING, workload: PUT_WORKLOAD, target: 'leader',
      warmupMs: context.options.warmupMs, windowMs: context.options.windowMs, runs,
      ratios: ratiosOf(runs),
    };
    return { finalLine: finalLine(runs, context), figures: { ...figures,
      peerTls: context.options.peerTls, auth: context.options.auth }, chartSvg: putChart(runs),
    resultName: context.options.peerTls ? 'put-peer-tls'
      : context.options.auth ? 'put-auth' : undefined };
  },
};

/**
 * Both clusters stay up (the one not measured idles) and the systems take turns at each level,
 * in alternating order: load from other work on a shared machine drifts over minutes, and
 * turns spread that drift over both systems instead of loading it onto the one measured last.
 */
async function measureAll(context: BenchContext): Promise<PutRuns> {
  const runs: Partial<Record<SystemName, PutLevel[]>> = {};
  await withClusters(context, PUT_TIMING, 'put', async (cluster) => {
    runs[cluster.system] = [];
  }, async (clusters) => {
    context.progress.plan(context.options.inflightLevels.length * clusters.length);
    for (const [i, inflight] of context.options.inflightLevels.entries()) {
      for (const cluster of i % 2 === 0 ? clusters : [...clusters].reverse()) {
        const level = await measureLevel(context, cluster, inflight);
        context.progress.step(`put: ${cluster.system} ${inflight} in flight: ` +
          describeWindow(level, 'put'));
        runs[cluster.system]!.push(level);
      }
    }
  });
  return runs;
}

/** One closed-loop window against the current leader, in a fresh load-client process. */
async function measureLevel(context: BenchContext, cluster: BenchCluster,
  inflight: number): Promise<PutLevel> {
  const leader = await cluster.waitHealthy();
  const token = await benchToken(context, cluster, leader.clientHostPort);
  const options: LoadClientOptions = {
    system: cluster.system, endpoint: leader.clientHostPort, inflight, token,
    warmupMs: context.options.warmupMs, windowMs: context.options.windowMs, ...PUT_WORKLOAD,
  };
  const measured = await measureClient(context, cluster, leader.name,
    `load client ${inflight}`, LOAD_CLIENT, options);
  return { inflight, ...windowFigures(measured) };
}

interface PutRatios {
  readonly inflight: number;
  /** Conclave's over etcd's: above 1 Conclave does more puts per second. */
  readonly opsPerS: number;
  /** Conclave's over etcd's: above 1 Conclave is slower. */
  readonly p99Ms: number;
  /** Conclave's over etcd's: above 1 Conclave's servers burn more CPU per put. */
  readonly serverCpuUsPerOp: number;
}

function ratiosOf(runs: PutRuns): PutRatios[] {
  const conclave = runs.conclave ?? [];
  return conclave.map((c) => {
    const e = runs.etcd?.find((level) => level.inflight === c.inflight);
    return {
      inflight: c.inflight,
      opsPerS: ratio(c.opsPerS, e?.opsPerS),
      p99Ms: ratio(c.latency.p99Ms, e?.latency.p99Ms),
      serverCpuUsPerOp: ratio(c.serverCpuUsPerOp, e?.serverCpuUsPerOp),
    };
  });
}

/** `put (...): ops/s conclave a/b/c, etcd d/e/f, conclave/etcd x/y/z; p99 ms ...; CPU ...` */
function finalLine(runs: PutRuns, context: BenchContext): string {
  const levels = context.options.inflightLevels;
  type Pick = (level: PutLevel) => number;
  const valuesOf = (system: SystemName, pick: Pick): (number | undefined)[] =>
    levels.map((n) => {
      const level = runs[system]?.find((l) => l.inflight === n);
      return level === undefined ? undefined : pick(level);
    });
  const part = (label: string, pick: (level: PutLevel) => number): string => {
    const c = valuesOf('conclave', pick);
    const e = valuesOf('etcd', pick);
    const own = `${label} conclave ${c.map(fmt).join('/')}`;
    if (runs.etcd === undefined) return own;
    return `${own}, etcd ${e.map(fmt).join('/')}, ` +
      `conclave/etcd ${c.map((v, i) => fmt(ratio(v, e[i]))).join('/')}`;
  };
  const peers = (context.options.peerTls ? 'peer mTLS' : 'peers plain TCP')
    + (context.options.auth ? ', auth on (root token)' : '');
  const head = `put (${levels.join('/')} in flight, 3 members, ${peers}, fsync on, heartbeat ` +
    `${PUT_TIMING.heartbeatMs} ms, election ${PUT_TIMING.electionTimeoutMs} ms):`;
  const tail = runs.etcd === undefined ? ' (add --vs etcd for the reference)' : '';
  return `${head} ${part('ops/s', (l) => l.opsPerS)}; ${part('p99 ms', (l) => l.latency.p99Ms)}; ` +
    `${part('server CPU µs/put', (l) => l.serverCpuUsPerOp)}${tail}`;
}
