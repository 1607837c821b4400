/**
 * read: etcd's published read benchmark, linearizable and serializable. 10,000 keys of 8 bytes
 * with 256-byte values are written first; then each read asks for one key drawn uniformly, closed
 * loop with 1 and 64 requests in flight, all sent to the leader. For each consistency and level:
 * a warm-up, then a fixed window; ops/s, latency p50/p99/p99.9, and the CPU each server and the
 * client used in the window (per second and per read).
 */
import * as http from 'node:http';
import type { BenchCluster, BenchMember, ClusterTiming } from '../lib/cluster.js';
import { withClusters, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import { comparePart, referenceHint } from '../lib/final-line.js';
import { post } from '../lib/http.js';
import type { LoadClientOptions } from '../lib/load-client.js';
import {
  describeWindow, LOAD_CLIENT, measureClient, windowFigures, type WindowFigures,
} from '../lib/measure.js';
import { ratio } from '../lib/stats.js';
import {
  putEncoder, rangeEncoder, valueOf, type ReadConsistency, type SystemName,
} from '../lib/wire.js';
import { benchToken } from '../lib/auth-setup.js';
import { readChart } from './read-chart.js';

/** etcd's defaults, which Conclave shares. */
const READ_TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });

/** The keys written before reading, and what each read asks for. */
export const READ_WORKLOAD = Object.freeze({
  /** Keys written first; each read draws one uniformly. Unit: keys. */
  keySpaceSize: 10_000,
  /** Unit: bytes. Default: 8 (etcd's --key-size). */
  keyBytes: 8,
  /** Unit: bytes. Default: 256 (etcd's --val-size). */
  valueBytes: 256,
});

/** The levels: one reader alone, and 64 at once. Unit: requests in flight. */
export const READ_INFLIGHT: readonly number[] = Object.freeze([1, 64]);
export const READ_CONSISTENCIES: readonly ReadConsistency[] =
  Object.freeze(['linearizable', 'serializable']);
/** Puts in flight while writing the keys (not measured). */
const POPULATE_INFLIGHT = 64;

export interface ReadLevel extends WindowFigures {
  readonly consistency: ReadConsistency;
  readonly inflight: number;
}

export type ReadRuns = Partial<Record<SystemName, readonly ReadLevel[]>>;

export const readSuite: Suite = {
  name: 'read',
  summary: 'one-key reads, linearizable and serializable, 1/64 in flight: ops/s, latency, CPU',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const runs = await measureAll(context);
    const figures = {
      suite: 'read', timing: READ_TIMING, workload: READ_WORKLOAD, target: 'leader',
      warmupMs: context.options.warmupMs, windowMs: context.options.windowMs, runs,
      ratios: ratiosOf(runs),
    };
    return { finalLine: finalLine(runs, context.options.auth), figures: { ...figures, auth: context.options.auth },
      chartSvg: readChart(runs), resultName: context.options.auth ? 'read-auth' : undefined };
  },
};

/** Both clusters stay up; at each level the systems take turns, in alternating order. */
async function measureAll(context: BenchContext): Promise<ReadRuns> {
  const runs: Partial<Record<SystemName, ReadLevel[]>> = {};
  await withClusters(context, READ_TIMING, 'read', async (cluster) => {
    context.say(`read: writing ${READ_WORKLOAD.keySpaceSize} keys to ${cluster.system}`);
    await populate(cluster, await cluster.waitHealthy());
    runs[cluster.system] = [];
  }, async (clusters) => {
    let turn = 0;
    context.progress.plan(READ_CONSISTENCIES.length * READ_INFLIGHT.length * clusters.length);
    for (const consistency of READ_CONSISTENCIES) {
      for (const inflight of READ_INFLIGHT) {
        for (const cluster of turn++ % 2 === 0 ? clusters : [...clusters].reverse()) {
          const level = await measureLevel(context, cluster, consistency, inflight);
          context.progress.step(`read: ${cluster.system} ${consistency} ${inflight} in flight: ` +
            describeWindow(level, 'read'));
          runs[cluster.system]!.push(level);
        }
      }
    }
  });
  return runs;
}

/** Writes every key once through the leader, then checks that a read finds the last one. */
async function populate(cluster: BenchCluster, leader: BenchMember): Promise<void> {
  const { keySpaceSize, keyBytes, valueBytes } = READ_WORKLOAD;
  const encoder = putEncoder(cluster.system, keySpaceSize, keyBytes, valueOf(valueBytes));
  const agent = new http.Agent({ keepAlive: true, maxSockets: POPULATE_INFLIGHT });
  const options = { agent, timeoutMs: 10_000, keepBody: true };
  let next = 0;
  try {
    await Promise.all(Array.from({ length: POPULATE_INFLIGHT }, async (_, lane) => {
      const clientId = `bench-populate-${process.pid}-${lane}`;
      for (let sequence = 1; next < keySpaceSize; sequence++) {
        const answer = await post(leader.clientHostPort, encoder.path,
          encoder.body(next++, clientId, sequence), options);
        if (answer.status !== 200) {
          throw new Error(`populate: HTTP ${answer.status} ${answer.body.slice(0, 200)}`);
        }
      }
    }));
    const check = rangeEncoder(cluster.system, keySpaceSize, keyBytes, 'linearizable');
    const answer = await post(leader.clientHostPort, check.path, check.body(keySpaceSize - 1),
      options);
    if (answer.status !== 200 || !answer.body.includes('"kvs":[{')) {
      throw new Error(`populate: the last key reads back as ${answer.body.slice(0, 300)}`);
    }
  } finally {
    agent.destroy();
  }
}

async function measureLevel(context: BenchContext, cluster: BenchCluster,
  consistency: ReadConsistency, inflight: number): Promise<ReadLevel> {
  const leader = await cluster.waitHealthy();
  const token = await benchToken(context, cluster, leader.clientHostPort);
  const options: LoadClientOptions = {
    system: cluster.system, endpoint: leader.clientHostPort, inflight, token,
    warmupMs: context.options.warmupMs, windowMs: context.options.windowMs, ...READ_WORKLOAD,
    kind: consistency === 'linearizable' ? 'range-linearizable' : 'range-serializable',
  };
  const measured = await measureClient(context, cluster, leader.name,
    `read ${consistency} ${inflight}`, LOAD_CLIENT, options);
  return { consistency, inflight, ...windowFigures(measured) };
}

function levelOf(runs: ReadRuns, system: SystemName, consistency: ReadConsistency,
  inflight: number): ReadLevel | undefined {
  return runs[system]?.find((l) => l.consistency === consistency && l.inflight === inflight);
}

interface ReadRatios {
  readonly consistency: ReadConsistency;
  readonly inflight: number;
  /** Conclave's over etcd's: above 1 Conclave answers more reads per second. */
  readonly opsPerS: number;
  /** Conclave's over etcd's: above 1 Conclave is slower. */
  readonly p99Ms: number;
  /** Conclave's over etcd's: above 1 Conclave's servers burn more CPU per read. */
  readonly serverCpuUsPerOp: number;
}

function ratiosOf(runs: ReadRuns): ReadRatios[] {
  return READ_CONSISTENCIES.flatMap((consistency) => READ_INFLIGHT.map((inflight) => {
    const c = levelOf(runs, 'conclave', consistency, inflight);
    const e = levelOf(runs, 'etcd', consistency, inflight);
    return {
      consistency, inflight, opsPerS: ratio(c?.opsPerS, e?.opsPerS),
      p99Ms: ratio(c?.latency.p99Ms, e?.latency.p99Ms),
      serverCpuUsPerOp: ratio(c?.serverCpuUsPerOp, e?.serverCpuUsPerOp),
    };
  }));
}

/** `read (...): linearizable ops/s conclave a/b, etcd c/d, conclave/etcd x/y; ...` */
function finalLine(runs: ReadRuns, auth: boolean): string {
  const part = (label: string, consistency: ReadConsistency,
    pick: (level: ReadLevel) => number): string => {
    const values = (system: SystemName): (number | undefined)[] => READ_INFLIGHT.map((n) => {
      const level = levelOf(runs, system, consistency, n);
      return level === undefined ? undefined : pick(level);
    });
    return comparePart(`${consistency} ${label}`, values('conclave'),
      runs.etcd === undefined ? undefined : values('etcd'));
  };
  const parts = [
    ...READ_CONSISTENCIES.map((c) => part('ops/s', c, (l) => l.opsPerS)),
    ...READ_CONSISTENCIES.map((c) => part('p99 ms', c, (l) => l.latency.p99Ms)),
    ...READ_CONSISTENCIES.map((c) => part('server CPU µs/read', c, (l) => l.serverCpuUsPerOp)),
  ];
  const { keySpaceSize, valueBytes } = READ_WORKLOAD;
  return `read (${READ_INFLIGHT.join('/')} in flight, one key of ${keySpaceSize} per read, ` +
    `${valueBytes} B values, 3 members, to the leader${auth ? ', auth on (root token)' : ''}): ` +
    `${parts.join('; ')}` +
    referenceHint(runs.etcd !== undefined);
}
