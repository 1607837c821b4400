/**
 * soak: does a member stay the same size for months? 1 M puts (etcd's benchmark shape: 100 k
 * keys, each written ten times, 256-byte values) into a 3-member cluster of each system in turn,
 * both with `--snapshot-count 10000`. Every 100 k puts: each member's resident memory (VmRSS)
 * and its bytes on disk, write-ahead log and snapshots apart (Conclave: DIR/wal, DIR/snap; etcd:
 * member/wal, member/snap with its bbolt db). After the last put, every member is stopped
 * (SIGTERM) and the three restarted together: the restart time runs from their launch until the
 * cluster has one leader, every member has applied the same index, and a linearizable read of
 * the last key written answers. Goals (issue #15): RSS at 1 M puts within 1.5× of RSS at 100 k
 * puts, and the restart within 2× of etcd's.
 */
import * as http from 'node:http';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { barPanelsSvg } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import type { BenchCluster, BenchMember, ClusterTiming } from '../lib/cluster.js';
import { ConclaveCluster } from '../lib/conclave-cluster.js';
import { newCluster, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import { referenceHint } from '../lib/final-line.js';
import { post } from '../lib/http.js';
import { memoryOf } from '../lib/proc.js';
import { sleep, waitFor } from '../lib/processes.js';
import { fmt, ratio } from '../lib/stats.js';
import {
  PUT_WORKLOAD, putEncoder, rangeEncoder, valueOf, type SystemName,
} from '../lib/wire.js';

const TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });
const CHECKPOINT_PUTS = 100_000;
/** Both systems' --snapshot-count: Conclave's default and etcd 3.5's. */
const SNAPSHOT_COUNT = 10_000;
/** Closed-loop writers, each with one put outstanding. */
const INFLIGHT = 64;
const REQUEST_TIMEOUT_MS = 10_000;
const RESTART_DEADLINE_MS = 120_000;
const MIB = 1024 * 1024;
/** Goals of issue #15. */
const RSS_GROWTH_GOAL = 1.5;
const RESTART_RATIO_GOAL = 2;

export interface SoakSample {
  readonly puts: number;
  /** Since the previous sample (or the start). Unit: puts/s. */
  readonly putsPerS: number;
  readonly members: readonly {
    readonly name: string;
    /** Unit: MiB. */
    readonly rssMiB: number;
    readonly walMiB: number;
    /** Snapshot files (etcd: its snap directory, bbolt db included). Unit: MiB. */
    readonly snapMiB: number;
  }[];
}

export interface SoakRun {
  readonly samples: readonly SoakSample[];
  /** Largest over the members of RSS at the last sample / RSS at the first. */
  readonly rssGrowthMax: number;
  /** From launching the stopped members until the cluster serves a linearizable read. Unit: ms. */
  readonly restartMs: number;
  /** Conclave: log entries after each member's newest snapshot before the stop (to replay). */
  readonly entriesToReplay?: readonly number[];
  /** Conclave: each member's start, from its info lines (`restartPhases`). */
  readonly restartPhases?: readonly RestartPhases[];
  readonly errors: number;
}

export type SoakRuns = Partial<Record<SystemName, SoakRun>>;

export const soakSuite: Suite = {
  name: 'soak',
  summary: '1 M puts: each member\'s RSS and disk every 100 k puts, then the restart time',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const runs: SoakRuns = {};
    for (const system of context.systems) runs[system] = await soakOne(system, context);
    const figures = { suite: 'soak', timing: TIMING, puts: context.options.soakPuts, snapshotCount: SNAPSHOT_COUNT,
      workload: PUT_WORKLOAD, inflight: INFLIGHT, runs,
      ratios: { restartMs: ratio(runs.conclave?.restartMs, runs.etcd?.restartMs) } };
    return { finalLine: finalLine(runs, context), figures,
      chartSvg: chart(runs, context.options.soakPuts) };
  },
};

async function soakOne(system: SystemName, context: BenchContext): Promise<SoakRun> {
  const cluster = newCluster(system, TIMING, context, 'soak',
    ['--snapshot-count', String(SNAPSHOT_COUNT)]);
  try {
    context.say(`soak: starting a 3-member ${system} cluster (--snapshot-count ${SNAPSHOT_COUNT})`);
    let leader = await cluster.start(3);
    const writer = new Writer(system);
    const samples: SoakSample[] = [];
    let last = { puts: 0, atMs: performance.now() };
    while (writer.done < context.options.soakPuts) {
      await writer.write(leader.clientHostPort, last.puts + CHECKPOINT_PUTS);
      leader = await cluster.waitHealthy();
      const nowMs = performance.now();
      const putsPerS = (writer.done - last.puts) / ((nowMs - last.atMs) / 1000);
      const sample = sampleOf(cluster, writer.done, putsPerS);
      last = { puts: writer.done, atMs: nowMs };
      samples.push(sample);
      context.say(`soak: ${system} ${describe(sample)}`);
    }
    const entriesToReplay = system === 'conclave' ? await logAfterSnapshots(cluster) : undefined;
    // Conclave's members log their start's milestones at info level (startup-timeline.ts).
    const logOffsets = cluster.members.map((m) => statSync(m.logFile, { throwIfNoEntry: false })
      ?.size ?? 0);
    if (cluster instanceof ConclaveCluster) cluster.logLevel = 'info';
    const restartMs = await restart(cluster, writer);
    context.say(`soak: ${system} restart of all 3 members: ${fmt(restartMs / 1000)} s` +
      (entriesToReplay === undefined ? '' : ` (entries after the newest snapshot: ` +
        `${entriesToReplay.join('/')})`));
    const restartPhases = cluster instanceof ConclaveCluster
      ? cluster.members.map((m, i) => restartPhasesOf(m, logOffsets[i] ?? 0)) : undefined;
    if (restartPhases !== undefined) context.say(`soak: ${system} ${describePhases(restartPhases)}`);
    const rssGrowthMax = Math.max(...cluster.members.map((m) => {
      const first = samples[0]?.members.find((x) => x.name === m.name)?.rssMiB;
      const final = samples[samples.length - 1]?.members.find((x) => x.name === m.name)?.rssMiB;
      return ratio(final, first) ?? Number.NaN;
    }));
    return { samples, rssGrowthMax, restartMs, errors: writer.errors,
      ...(entriesToReplay === undefined ? {} : { entriesToReplay }),
      ...(restartPhases === undefined ? {} : { restartPhases }) };
  } catch (error) {
    for (const member of cluster.members) {
      context.say(`${system} ${member.name} log:\n${cluster.logTail(member)}`);
    }
    throw error;
  } finally {
    await cluster.stop();
  }
}

/** Closed-loop writers over keep-alive connections: key i % 100 000 for the i-th put. */
class Writer {
  done = 0;
  errors = 0;
  private next = 0;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
  private readonly encoder;
  private readonly sequences: number[] = new Array<number>(INFLIGHT).fill(0);

  constructor(readonly system: SystemName) {
    this.encoder = putEncoder(system, PUT_WORKLOAD.keySpaceSize, PUT_WORKLOAD.keyBytes,
      valueOf(PUT_WORKLOAD.valueBytes));
  }

  /** The key of the last put sent. */
  get lastKey(): number {
    return (this.next - 1) % PUT_WORKLOAD.keySpaceSize;
  }

  /** Writes until `target` puts succeeded in all. */
  async write(endpoint: string, target: number): Promise<void> {
    await Promise.all(Array.from({ length: INFLIGHT }, (_, lane) => this.lane(endpoint, lane,
      target)));
  }

  private async lane(endpoint: string, lane: number, target: number): Promise<void> {
    while (this.next < target) {
      const key = this.next++ % PUT_WORKLOAD.keySpaceSize;
      const sequence = ++this.sequences[lane]!;
      const body = this.encoder.body(key, `soak-${lane}`, sequence);
      try {
        const answer = await post(endpoint, this.encoder.path, body,
          { agent: this.agent, timeoutMs: REQUEST_TIMEOUT_MS, keepBody: false });
        if (answer.status === 200) {
          this.done++;
          continue;
        }
      } catch {
        // Counted below; the put is not retried (the next one is as good for a soak).
      }
      this.errors++;
      this.next--; // write the same count of puts in all
      await sleep(10);
    }
  }
}

function sampleOf(cluster: BenchCluster, puts: number, putsPerS: number): SoakSample {
  return {
    puts, putsPerS,
    members: cluster.members.map((member) => {
      const memory = member.process === undefined ? undefined : memoryOf(member.process.pid);
      const { walBytes, snapBytes } = diskOf(cluster.system, member);
      return { name: member.name, rssMiB: (memory?.rssBytes ?? Number.NaN) / MIB,
        walMiB: walBytes / MIB, snapMiB: snapBytes / MIB };
    }),
  };
}

function diskOf(system: SystemName, member: BenchMember): { walBytes: number; snapBytes: number } {
  const base = system === 'conclave' ? member.dataDir : join(member.dataDir, 'member');
  return { walBytes: bytesUnder(join(base, 'wal')), snapBytes: bytesUnder(join(base, 'snap')) };
}

function bytesUnder(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    total += stat.isDirectory() ? bytesUnder(path) : stat.size;
  }
  return total;
}

/** Conclave members' applied index minus their snapshot index: what a restart replays. */
async function logAfterSnapshots(cluster: BenchCluster): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: false });
  const counts: number[] = [];
  for (const member of cluster.members) {
    const answer = await new Promise<string>((resolve, reject) => {
      http.get(`http://${member.clientHostPort}/v1/status`, { agent }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.once('end', () => resolve(text));
      }).once('error', reject);
    });
    const status = JSON.parse(answer) as { appliedIndex: number; snapshotIndex: number };
    counts.push(status.appliedIndex - status.snapshotIndex);
  }
  return counts;
}

/**
 * One Conclave member's restart from its log (ms since its process started, its own clock):
 * `wal opened` (with the time until startServer ran: Node's start and module loading), the
 * snapshot's decode, the replay, `ready`. Undefined fields: the line was not found.
 */
export interface RestartPhases {
  readonly name: string;
  readonly moduleLoadMs?: number;
  readonly walOpenMs?: number;
  readonly snapshotBytes?: number;
  readonly snapshotDecodeMs?: number;
  readonly replayedEntries?: number;
  readonly replayMs?: number;
  /** When the replay ended. */
  readonly replayedAtMs?: number;
  readonly readyAtMs?: number;
}

function restartPhasesOf(member: BenchMember, fromOffset: number): RestartPhases {
  const text = readFileSync(member.logFile).subarray(fromOffset).toString('utf8');
  const phases: Record<string, number | string> = { name: member.name };
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const msg = String(entry['msg'] ?? '');
    const n = (key: string): number => Number(entry[key]);
    if (msg === 'wal opened') {
      Object.assign(phases, { moduleLoadMs: n('moduleLoadMs'), walOpenMs: n('ms') });
    } else if (msg.startsWith('snapshot loaded ') && phases['snapshotBytes'] === undefined) {
      Object.assign(phases, { snapshotBytes: n('sizeBytes'), snapshotDecodeMs: n('ms') });
    } else if (msg.startsWith('replayed ') && phases['replayMs'] === undefined) {
      Object.assign(phases, { replayedEntries: n('entries'), replayMs: n('ms'),
        replayedAtMs: n('atMs') });
    } else if (msg === 'ready' && phases['readyAtMs'] === undefined) {
      phases['readyAtMs'] = n('atMs');
    }
  }
  return phases as unknown as RestartPhases;
}

function describePhases(all: readonly RestartPhases[]): string {
  const each = (f: (p: RestartPhases) => number | undefined): string =>
    all.map((p) => (f(p) === undefined ? '?' : fmt(f(p)!))).join('/');
  return `restart phases (${all.map((p) => p.name).join('/')}; ms since each process started): `
    + `Node start + modules ${each((p) => p.moduleLoadMs)}, data dir (WAL + snapshot file read) `
    + `${each((p) => p.walOpenMs)}, snapshot decode ${each((p) => p.snapshotDecodeMs)} `
    + `(${each((p) => p.snapshotBytes === undefined ? undefined : p.snapshotBytes / 2 ** 20)} MiB)`
    + `, replay ${each((p) => p.replayMs)} (${each((p) => p.replayedEntries)} entries) ending at `
    + `${each((p) => p.replayedAtMs)}, ready at ${each((p) => p.readyAtMs)}`;
}

/** Stops every member, launches all three, and times until a linearizable read answers. */
async function restart(cluster: BenchCluster, writer: Writer): Promise<number> {
  await Promise.all(cluster.members.map((m) => cluster.stopMember(m)));
  const startMs = performance.now();
  for (const member of cluster.members) cluster.launch(member);
  const leader = await cluster.waitHealthy(RESTART_DEADLINE_MS);
  const read = rangeEncoder(cluster.system, PUT_WORKLOAD.keySpaceSize, PUT_WORKLOAD.keyBytes,
    'linearizable');
  const agent = new http.Agent({ keepAlive: true });
  await waitFor(async () => {
    try {
      const answer = await post(leader.clientHostPort, read.path, read.body(writer.lastKey),
        { agent, timeoutMs: 2_000, keepBody: false });
      return answer.status === 200 ? true : undefined;
    } catch {
      return undefined;
    }
  }, RESTART_DEADLINE_MS, `${cluster.system}: a linearizable read after the restart`, 20);
  return performance.now() - startMs;
}

function describe(sample: SoakSample): string {
  return `${sample.puts / 1000} k puts (${fmt(sample.putsPerS)}/s): ` + sample.members.map((m) =>
    `${m.name} RSS ${fmt(m.rssMiB)} MiB, WAL ${fmt(m.walMiB)} MiB, snap ${fmt(m.snapMiB)} MiB`)
    .join('; ');
}

function finalLine(runs: SoakRuns, context: BenchContext): string {
  const puts = context.options.soakPuts;
  const last = `${puts >= 1e6 ? `${puts / 1e6} M` : `${puts / 1000} k`}`;
  const c = runs.conclave;
  const e = runs.etcd;
  const disk = (run: SoakRun | undefined): number | undefined => {
    const last = run?.samples[run.samples.length - 1];
    return last === undefined ? undefined
      : Math.max(...last.members.map((m) => m.walMiB + m.snapMiB));
  };
  const restartRatio = ratio(c?.restartMs, e?.restartMs);
  const goals = `goals: RSS growth ≤ ${RSS_GROWTH_GOAL}× ${(c?.rssGrowthMax ?? Infinity)
    <= RSS_GROWTH_GOAL ? 'met' : 'NOT met'}` + (e === undefined ? '' : `, restart ≤ `
    + `${RESTART_RATIO_GOAL}× etcd's ${(restartRatio ?? Infinity) <= RESTART_RATIO_GOAL
      ? 'met' : 'NOT met'}`);
  const part = (label: string, pick: (r: SoakRun) => number | undefined, unit: string): string =>
    `${label} conclave ${fmt(c === undefined ? undefined : pick(c))}${unit}` + (e === undefined
      ? '' : `, etcd ${fmt(pick(e))}${unit}, conclave/etcd ${fmt(ratio(c === undefined
        ? undefined : pick(c), pick(e)))}`);
  return `soak (${last} puts, ${PUT_WORKLOAD.keySpaceSize / 1000} k keys, `
    + `${PUT_WORKLOAD.valueBytes} B values, 3 members, --snapshot-count ${SNAPSHOT_COUNT}): `
    + `${part(`RSS growth 100 k→${last} puts (worst member)`, (r) => r.rssGrowthMax, '×')}; `
    + `${part('restart', (r) => r.restartMs / 1000, ' s')}; `
    + `${part(`disk at ${last} (largest member)`, (r) => disk(r), ' MiB')}; ${goals}`
    + referenceHint(context.systems.includes('etcd'));
}

function chart(runs: SoakRuns, puts: number): string {
  const systems = (['conclave', 'etcd'] as const).filter((s) => runs[s] !== undefined);
  const checkpoints = (runs.conclave ?? runs.etcd)?.samples.map((s) => `${s.puts / 1000}k`) ?? [];
  const mean = (pick: (m: SoakSample['members'][number]) => number) =>
    Object.fromEntries(systems.map((s) => [s, runs[s]!.samples.map((sample) =>
      sample.members.reduce((sum, m) => sum + pick(m), 0) / sample.members.length)]));
  return barPanelsSvg({
    title: `soak: ${puts / 1000} k puts, 100 k keys of 256 B, --snapshot-count ${SNAPSHOT_COUNT}`,
    subtitle: 'per member, mean of the 3; restart: all 3 stopped, then relaunched together',
    series: systems.map((name) => ({ name, colour: SYSTEM_COLOURS[name] })),
    panels: [
      { title: 'resident memory (MiB, flat is the goal)', categories: checkpoints,
        values: mean((m) => m.rssMiB) },
      { title: 'WAL + snapshots on disk (MiB)', categories: checkpoints,
        values: mean((m) => m.walMiB + m.snapMiB) },
      { title: 'restart (s, lower is better)', categories: ['restart'],
        values: Object.fromEntries(systems.map((s) => [s, [runs[s]!.restartMs / 1000]])) },
    ],
    width: 1500,
  });
}
