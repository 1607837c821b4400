/**
 * idle: what a cluster costs when nobody uses it. Each system's 3 members run at once with no
 * client (heartbeats, timers, housekeeping only); over one window (30 s by default) the suite
 * reads each member's CPU time (/proc/<pid>/stat) at both ends, and its resident memory
 * (/proc/<pid>/status: VmRSS) every second, plus its peak since start (VmHWM).
 */
import type { BenchCluster, BenchMember, ClusterTiming } from '../lib/cluster.js';
import { withClusters, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import { comparePart, referenceHint } from '../lib/final-line.js';
import { sum } from '../lib/measure.js';
import { memoryOf } from '../lib/proc.js';
import { sleep } from '../lib/processes.js';
import { fmt, ratio } from '../lib/stats.js';
import type { SystemName } from '../lib/wire.js';
import { idleChart } from './idle-chart.js';

/** etcd's defaults, which Conclave shares. */
const IDLE_TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });
/** Quiet time after the clusters are healthy and before the window (start-up work ends). */
const IDLE_SETTLE_MS = 3_000;
/** How often resident memory is sampled in the window. Unit: ms. */
const IDLE_SAMPLE_MS = 1_000;
const MIB = 1024 * 1024;

export interface IdleMember {
  readonly name: string;
  readonly role: 'leader' | 'follower';
  /** CPU over the window: 100 is one core busy all the time. Unit: %. */
  readonly cpuPercent: number;
  /** Resident memory, mean of the samples in the window. Unit: MiB. */
  readonly rssMiBMean: number;
  /** Resident memory, largest sample in the window. Unit: MiB. */
  readonly rssMiBMax: number;
  /** VmHWM at the end: the peak since the process started (start-up included). Unit: MiB. */
  readonly rssPeakMiB: number;
}

export interface IdleRun {
  /** Leader first, then the followers. */
  readonly members: readonly IdleMember[];
  readonly windowMs: number;
  /** Mean over the members. Unit: %. */
  readonly cpuPercentPerMember: number;
  /** Mean over the members of their mean resident memory. Unit: MiB. */
  readonly rssMiBPerMember: number;
}

export type IdleRuns = Partial<Record<SystemName, IdleRun>>;

export const idleSuite: Suite = {
  name: 'idle',
  summary: 'CPU and resident memory of each member of an idle cluster (default 30 s)',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const runs = await measureAll(context);
    const figures = {
      suite: 'idle', timing: IDLE_TIMING, windowMs: context.options.idleWindowMs,
      sampleMs: IDLE_SAMPLE_MS, runs,
      ratios: {
        /** Conclave's over etcd's: above 1 Conclave uses more. */
        cpuPercentPerMember: ratio(runs.conclave?.cpuPercentPerMember,
          runs.etcd?.cpuPercentPerMember),
        rssMiBPerMember: ratio(runs.conclave?.rssMiBPerMember, runs.etcd?.rssMiBPerMember),
      },
    };
    return { finalLine: finalLine(runs, context), figures, chartSvg: idleChart(runs) };
  },
};

/** Both clusters idle side by side over the same window: the same machine load for both. */
async function measureAll(context: BenchContext): Promise<IdleRuns> {
  const runs: Partial<Record<SystemName, IdleRun>> = {};
  await withClusters(context, IDLE_TIMING, 'idle', async () => {}, async (clusters) => {
    context.progress.plan(clusters.length);
    const leaders = await Promise.all(clusters.map((cluster) => cluster.waitHealthy()));
    await sleep(IDLE_SETTLE_MS);
    context.say(`idle: measuring for ${context.options.idleWindowMs / 1000} s, no clients`);
    const measured = await measureWindow(clusters, context.options.idleWindowMs);
    clusters.forEach((cluster, i) => {
      const run = runOf(cluster, leaders[i]!, measured);
      context.progress.step(`idle: ${cluster.system}: ${run.members.map((m) => `${m.name} (${m.role}) ` +
        `${fmt(m.cpuPercent)} % CPU, ${fmt(m.rssMiBMean)} MiB`).join('; ')}`);
      runs[cluster.system] = run;
    });
  });
  return runs;
}

interface WindowReadings {
  readonly windowMs: number;
  /** By pid. Unit: ms. */
  readonly cpuMs: Map<number, number>;
  /** By pid: each sample's VmRSS. Unit: bytes. */
  readonly rssBytes: Map<number, number[]>;
  /** By pid: VmHWM at the end. Unit: bytes. */
  readonly rssPeakBytes: Map<number, number>;
}

async function measureWindow(clusters: readonly BenchCluster[],
  windowMs: number): Promise<WindowReadings> {
  const members = clusters.flatMap((cluster) => cluster.running);
  const pids = members.map((m) => m.process!.pid);
  const cpuBefore = clusters.map((cluster) => cluster.cpuMsByMember());
  const rssBytes = new Map<number, number[]>(pids.map((pid) => [pid, []]));
  const startMs = performance.now();
  const sample = (): void => {
    for (const pid of pids) {
      const memory = memoryOf(pid);
      if (memory !== undefined) rssBytes.get(pid)!.push(memory.rssBytes);
    }
  };
  sample();
  while (performance.now() - startMs < windowMs) {
    await sleep(Math.min(IDLE_SAMPLE_MS, windowMs - (performance.now() - startMs)));
    sample();
  }
  const cpuAfter = clusters.map((cluster) => cluster.cpuMsByMember());
  const elapsedMs = performance.now() - startMs;
  const cpuMs = new Map<number, number>();
  const rssPeakBytes = new Map<number, number>();
  clusters.forEach((cluster, i) => {
    for (const member of cluster.running) {
      const before = cpuBefore[i]!.get(member.name);
      const after = cpuAfter[i]!.get(member.name);
      if (before !== undefined && after !== undefined) {
        cpuMs.set(member.process!.pid, after - before);
      }
      const memory = memoryOf(member.process!.pid);
      if (memory !== undefined) rssPeakBytes.set(member.process!.pid, memory.rssPeakBytes);
    }
  });
  return { windowMs: elapsedMs, cpuMs, rssBytes, rssPeakBytes };
}

function runOf(cluster: BenchCluster, leader: BenchMember, readings: WindowReadings): IdleRun {
  const ordered = [leader, ...cluster.running.filter((m) => m !== leader)];
  const members = ordered.map((member): IdleMember => {
    const pid = member.process!.pid;
    const rss = readings.rssBytes.get(pid) ?? [];
    return {
      name: member.name, role: member === leader ? 'leader' : 'follower',
      cpuPercent: (100 * (readings.cpuMs.get(pid) ?? Number.NaN)) / readings.windowMs,
      rssMiBMean: rss.length === 0 ? Number.NaN : sum(rss) / rss.length / MIB,
      rssMiBMax: rss.length === 0 ? Number.NaN : Math.max(...rss) / MIB,
      rssPeakMiB: (readings.rssPeakBytes.get(pid) ?? Number.NaN) / MIB,
    };
  });
  return {
    members, windowMs: readings.windowMs,
    cpuPercentPerMember: sum(members.map((m) => m.cpuPercent)) / members.length,
    rssMiBPerMember: sum(members.map((m) => m.rssMiBMean)) / members.length,
  };
}

/** `idle (...): CPU % leader/follower/follower conclave a/b/c, etcd d/e/f, ...; RSS MiB ...` */
function finalLine(runs: IdleRuns, context: BenchContext): string {
  const hasEtcd = runs.etcd !== undefined;
  const both = (label: string, pick: (m: IdleMember) => number): string => {
    const values = (system: SystemName): number[] => (runs[system]?.members ?? []).map(pick);
    return comparePart(label, values('conclave'), hasEtcd ? values('etcd') : undefined);
  };
  const mean = (label: string, pick: (run: IdleRun) => number): string =>
    comparePart(label, [runs.conclave === undefined ? undefined : pick(runs.conclave)],
      hasEtcd ? [pick(runs.etcd!)] : undefined);
  return `idle (3 members, no clients, ${fmt(context.options.idleWindowMs / 1000)} s, ` +
    `heartbeat ${IDLE_TIMING.heartbeatMs} ms; per member leader/follower/follower): ` +
    `${both('CPU %', (m) => m.cpuPercent)}; ${both('RSS MiB', (m) => m.rssMiBMean)}; ` +
    `${mean('mean CPU % per member', (r) => r.cpuPercentPerMember)}; ` +
    `${mean('mean RSS MiB per member', (r) => r.rssMiBPerMember)}${referenceHint(hasEtcd)}`;
}
