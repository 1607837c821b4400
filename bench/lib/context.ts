/**
 * What every suite gets from the harness (bench/run.ts): the process group that owns every
 * process the run starts, a work directory on disk, the systems to measure, the options, and
 * where to say what is happening. A suite returns its final line and its figures.
 */
import { join } from 'node:path';
import { ConclaveCluster } from './conclave-cluster.js';
import type { BenchCluster, ClusterTiming } from './cluster.js';
import { EtcdCluster } from './etcd-cluster.js';
import type { ProcessGroup } from './processes.js';
import type { BenchProgress } from './progress.js';
import type { SystemName } from './wire.js';

/**
 * How the failover suite takes the leader out: `kill` (kill -9: the kernel closes its sockets,
 * peers see resets) or `stop` (SIGSTOP: the process freezes with its sockets open and simply
 * goes silent, like a partition or a hung host; SIGCONT afterwards).
 */
export type FailoverFault = 'kill' | 'stop';
export const FAILOVER_FAULTS: readonly FailoverFault[] = Object.freeze(['kill', 'stop']);

export interface BenchOptions {
  /** Warm-up before each measured window. Unit: ms. */
  readonly warmupMs: number;
  /** Each measured window. Unit: ms. */
  readonly windowMs: number;
  /** Requests in flight for the put suite. Unit: requests. */
  readonly inflightLevels: readonly number[];
  /** Leader kills (or pauses, with fault `stop`) per system and timing setting in failover. */
  readonly kills: number;
  /** How failover takes the leader out. Default: `kill` (the suite's original measurement). */
  readonly failoverFault: FailoverFault;
  /**
   * The idle suite's window: `--window-s` when given, else 30 s (idle CPU is small, and a long
   * window averages over many heartbeats and timer ticks). Unit: ms.
   */
  readonly idleWindowMs: number;
  /**
   * Members of the simulated gossip cluster. Default: 1,000 (the size; about 15 min per
   * seed and Lifeguard setting on this machine); 100 takes seconds.
   */
  readonly gossipMembers: number;
  /** Mutual TLS between peers of both systems (`--peer-tls`). Default: false. */
  readonly peerTls: boolean;
  /** Authentication on in both systems, root's token on every request (`--auth`). */
  readonly auth: boolean;
  /**
   * Datagram loss of `gossip --vs memberlist`: every member of both systems drops each datagram
   * it sends with this probability. Default: 0.01 (the README's simulated base loss). Unit: ratio.
   */
  readonly gossipLoss: number;
  /**
   * Puts in all of the soak suite, a multiple of its 100 k checkpoint. Default: 1 M (issue
   * 15's figure: about 11 min per system on the shared machine); fewer fit a 10-min slot.
   */
  readonly soakPuts: number;
}

export const BENCH_DEFAULTS: BenchOptions = Object.freeze({
  warmupMs: 3_000,
  windowMs: 10_000,
  inflightLevels: Object.freeze([1, 64, 256]),
  kills: 10,
  failoverFault: 'kill',
  idleWindowMs: 30_000,
  gossipMembers: 1_000,
  peerTls: false,
  auth: false,
  gossipLoss: 0.01,
  soakPuts: 1_000_000,
});

/** What `--vs` compares Conclave with: etcd (most suites) or memberlist (gossip). */
export type Reference = 'etcd' | 'memberlist';

export interface BenchContext {
  readonly processes: ProcessGroup;
  /** Members' data and logs go under here (on the machine's disk). */
  readonly workDir: string;
  /** Conclave alone, or Conclave and etcd (`--vs etcd`). */
  readonly systems: readonly SystemName[];
  /** `--vs`: the reference system, if any (memberlist only means something to gossip). */
  readonly reference: Reference | undefined;
  readonly options: BenchOptions;
  /** When set, Conclave's servers are profiled (node --cpu-prof) into subfolders of this. */
  readonly cpuProfileDir: string | undefined;
  /** A progress line (stderr). */
  readonly say: (line: string) => void;
  /**
   * The run's progress: a suite plans its measured steps and reports each step's result line
   * (shown above the bar, and kept for Ctrl-C's partial summary).
   */
  readonly progress: BenchProgress;
}

export interface SuiteOutcome {
  /** The one line that sums the suite up: both systems' figures and the ratio. */
  readonly finalLine: string;
  /** Everything measured, written to bench/results/<suite>.json. */
  readonly figures: unknown;
  /** The chart, written to bench/results/<suite>.svg. */
  readonly chartSvg: string;
  /**
   * The results' file name without extension when it is not the suite's name (failover with
   * `--fault stop` writes failover-stop.json and .svg, beside the kill figures).
   */
  readonly resultName?: string | undefined;
}

export interface Suite {
  readonly name: string;
  readonly summary: string;
  run(context: BenchContext): Promise<SuiteOutcome>;
}

/** A cluster of `system` with `timing`, owned by the context's process group. */
export function newCluster(system: SystemName, timing: ClusterTiming, context: BenchContext,
  label: string, serverArgs: readonly string[] = []): BenchCluster {
  const workDir = join(context.workDir, `${label}-${system}`);
  const cpuProfileDir = context.cpuProfileDir === undefined
    ? undefined : join(context.cpuProfileDir, label);
  const peerCertsDir = context.options.peerTls ? join(context.workDir, 'certs') : undefined;
  const components = { processes: context.processes, workDir, cpuProfileDir, peerCertsDir,
    serverArgs };
  switch (system) {
    case 'conclave':
      return new ConclaveCluster(timing, components);
    case 'etcd':
      return new EtcdCluster(timing, components);
  }
}

/**
 * Starts one 3-member cluster per system of the run (then `prepare`s each), runs `body`, and
 * stops every cluster however it ends; on an error, each member's log tail is printed first.
 */
export async function withClusters<T>(context: BenchContext, timing: ClusterTiming,
  label: string, prepare: (cluster: BenchCluster) => Promise<void>,
  body: (clusters: readonly BenchCluster[]) => Promise<T>): Promise<T> {
  const clusters = context.systems.map((s) => newCluster(s, timing, context, label));
  try {
    for (const cluster of clusters) {
      context.say(`${label}: starting a 3-member ${cluster.system} cluster`);
      await cluster.start(3);
      await prepare(cluster);
    }
    return await body(clusters);
  } catch (error) {
    for (const cluster of clusters) {
      for (const member of cluster.members) {
        context.say(`${cluster.system} ${member.name} log:\n${cluster.logTail(member)}`);
      }
    }
    throw error;
  } finally {
    await Promise.all(clusters.map((cluster) => cluster.stop()));
  }
}
