/**
 * failover: how long a cluster cannot take writes when its leader fails. For each timing setting
 * and system: a fresh 3-member cluster; then, `kills` times: wait until it is settled, take the
 * leader out, and time from the signal until a put sent to a surviving member is acknowledged.
 * Two faults (`--fault`): `kill` (kill -9; the killed member is restarted on its data before the
 * next round) and `stop` (SIGSTOP: the leader freezes with its sockets open, a silent cut-off;
 * after the measurement SIGCONT, and the time until the cluster is settled again is recorded).
 * Puts go out every PROBE_INTERVAL_MS to the survivors in turn, without waiting for earlier
 * ones (a put a follower accepted while no leader existed may hang until its own timeout). A
 * Conclave follower answers 307 to the leader it knows; the probe follows it once.
 */
import { setMaxListeners } from 'node:events';
import * as http from 'node:http';
import type { BenchCluster, BenchMember, ClusterTiming } from '../lib/cluster.js';
import {
  newCluster, type BenchContext, type FailoverFault, type Suite, type SuiteOutcome,
} from '../lib/context.js';
import { hostPortOf, post } from '../lib/http.js';
import { sleep } from '../lib/processes.js';
import { fmt, ratio, spreadOf, type Spread } from '../lib/stats.js';
import { putEncoder, valueOf, type PutEncoder, type SystemName } from '../lib/wire.js';
import { failoverChart } from './failover-chart.js';

/** The two settings the issue asks for: etcd's defaults, and a fast LAN profile. */
export const FAILOVER_TIMINGS: readonly ClusterTiming[] = Object.freeze([
  { heartbeatMs: 100, electionTimeoutMs: 1000 },
  { heartbeatMs: 50, electionTimeoutMs: 300 },
]);

/** Time between two probe puts: the resolution of each measurement. Unit: ms. */
const PROBE_INTERVAL_MS = 10;
/** Probe puts outstanding at most (etcd followers hold puts while no leader exists). */
const PROBE_OUTSTANDING_MAX = 600;
/** One probe put gives up after this long. Unit: ms. */
const PROBE_TIMEOUT_MS = 5_000;
/** A kill (or pause) counts as failed when no write succeeds for this long. Unit: ms. */
const FAILOVER_DEADLINE_MS = 30_000;

/** How each fault is named in progress lines, the final line and the chart. */
export const FAULT_WORDS: Readonly<Record<FailoverFault, { signal: string; round: string }>> =
  Object.freeze({
    kill: { signal: 'kill -9', round: 'kill' },
    stop: { signal: 'SIGSTOP', round: 'pause' },
  });

/** One run's figures. With fault `stop`, "kill" in the field names means one pause. */
export interface FailoverRun {
  readonly system: SystemName;
  readonly timing: ClusterTiming;
  /** Signal to first acknowledged write, one per round that recovered. Unit: ms. */
  readonly failoverMs: readonly number[];
  /** Rounds after which no write succeeded within FAILOVER_DEADLINE_MS. */
  readonly failedKills: number;
  readonly spread: Spread;
  /**
   * Fault `stop` only: from SIGCONT of the old leader until every member follows one leader
   * and all have applied the same index again, one per round. Unit: ms.
   */
  readonly settleAfterResumeMs?: readonly number[];
}

/** What one round measured. */
interface RoundOutcome {
  /** Signal to first acknowledged write; undefined when none came before the deadline. */
  readonly failoverMs: number | undefined;
  /** Fault `stop`: SIGCONT to settled again. Unit: ms. */
  readonly settleAfterResumeMs: number | undefined;
}

export const failoverSuite: Suite = {
  name: 'failover',
  summary: 'kill -9 or SIGSTOP (--fault) the leader; ms until a write through a survivor ' +
    'succeeds',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const fault = context.options.failoverFault;
    const runs: FailoverRun[] = [];
    context.progress.plan(FAILOVER_TIMINGS.length * context.systems.length *
      context.options.kills);
    for (const timing of FAILOVER_TIMINGS) {
      for (const system of context.systems) {
        runs.push(await measure(context, system, timing, fault));
      }
    }
    const figures = {
      suite: 'failover', fault, kills: context.options.kills, probeIntervalMs: PROBE_INTERVAL_MS,
      runs,
      ratios: FAILOVER_TIMINGS.map((timing) => ({
        timing,
        medianMs: ratio(find(runs, 'conclave', timing)?.spread.medianMs,
          find(runs, 'etcd', timing)?.spread.medianMs),
      })),
    };
    return {
      finalLine: finalLine(runs, context, fault), figures, chartSvg: failoverChart(runs, fault),
      resultName: fault === 'kill' ? undefined : `failover-${fault}`,
    };
  },
};

async function measure(context: BenchContext, system: SystemName, timing: ClusterTiming,
  fault: FailoverFault): Promise<FailoverRun> {
  const label = `failover-${fault === 'kill' ? '' : `${fault}-`}` +
    `${timing.heartbeatMs}-${timing.electionTimeoutMs}`;
  const cluster = newCluster(system, timing, context, label);
  const encoder = putEncoder(system, 1, 8, valueOf(256));
  const failoverMs: number[] = [];
  const settleAfterResumeMs: number[] = [];
  const { round: word } = FAULT_WORDS[fault];
  let failedKills = 0;
  try {
    context.say(`failover: ${system}, ${FAULT_WORDS[fault].signal}, heartbeat ` +
      `${timing.heartbeatMs} ms, election ${timing.electionTimeoutMs} ms`);
    await cluster.start(3);
    for (let round = 1; round <= context.options.kills; round++) {
      const outcome = await faultLeaderOnce(cluster, encoder, `${label}-${round}`, fault);
      const ms = outcome.failoverMs;
      if (ms === undefined) failedKills++;
      else failoverMs.push(ms);
      if (outcome.settleAfterResumeMs !== undefined) {
        settleAfterResumeMs.push(outcome.settleAfterResumeMs);
      }
      const settled = outcome.settleAfterResumeMs === undefined ? ''
        : `, settled ${fmt(outcome.settleAfterResumeMs)} ms after SIGCONT`;
      context.progress.step(`failover: ${system} ${word} ${round}/${context.options.kills}: ` +
        `${ms === undefined ? 'no write within the deadline' : `${fmt(ms)} ms`}${settled}`);
    }
  } catch (error) {
    for (const member of cluster.members) {
      context.say(`${system} ${member.name} log:\n${cluster.logTail(member)}`);
    }
    throw error;
  } finally {
    await cluster.stop();
  }
  const run = { system, timing, failoverMs, failedKills, spread: spreadOf(failoverMs) };
  return fault === 'stop' ? { ...run, settleAfterResumeMs } : run;
}

/**
 * One round: settle, take the leader out, time the first write through a survivor; then bring
 * the leader back (restart after a kill; SIGCONT after a pause, and wait until settled).
 */
async function faultLeaderOnce(cluster: BenchCluster, encoder: PutEncoder, tag: string,
  fault: FailoverFault): Promise<RoundOutcome> {
  const leader = await cluster.waitHealthy();
  const survivors = cluster.running.filter((m) => m !== leader);
  // A random pause so the fault does not fall at a fixed point of the heartbeat cycle.
  await sleep(200 + Math.random() * 2 * cluster.timing.heartbeatMs);
  const startMs = performance.now();
  switch (fault) {
    case 'kill': {
      const killed = cluster.kill9(leader);
      const ms = await firstWriteMs(cluster.system, survivors, encoder, tag, startMs);
      await killed;
      cluster.launch(leader);
      return { failoverMs: ms, settleAfterResumeMs: undefined };
    }
    case 'stop': {
      // Frozen, not gone: its sockets stay open, nothing resets; it just stops answering.
      cluster.pause(leader);
      let ms: number | undefined;
      try {
        ms = await firstWriteMs(cluster.system, survivors, encoder, tag, startMs);
      } finally {
        cluster.resume(leader);
      }
      const resumedMs = performance.now();
      await cluster.waitHealthy();
      return { failoverMs: ms, settleAfterResumeMs: performance.now() - resumedMs };
    }
  }
}

/** Probes survivors until one put is acknowledged; ms since `startMs`, or undefined. */
function firstWriteMs(system: SystemName, survivors: readonly BenchMember[], encoder: PutEncoder,
  tag: string, startMs: number): Promise<number | undefined> {
  const agent = new http.Agent({ keepAlive: true });
  const abort = new AbortController();
  // Every outstanding probe listens on the one signal that cancels the losers.
  setMaxListeners(2 * PROBE_OUTSTANDING_MAX, abort.signal);
  let outstanding = 0;
  let attempt = 0;
  return new Promise<number | undefined>((resolve) => {
    const finish = (ms: number | undefined): void => {
      clearInterval(timer);
      abort.abort();
      agent.destroy();
      resolve(ms);
    };
    const launch = (): void => {
      if (performance.now() - startMs > FAILOVER_DEADLINE_MS) return finish(undefined);
      if (outstanding >= PROBE_OUTSTANDING_MAX) return;
      const target = survivors[attempt % survivors.length]!;
      const body = encoder.body(0, `failover-${process.pid}-${tag}-${attempt++}`, 1);
      outstanding++;
      const written = writeThrough(system, target.clientHostPort, encoder.path, body, agent,
        abort.signal);
      void written.then((ok) => {
        outstanding--;
        if (ok && !abort.signal.aborted) finish(performance.now() - startMs);
      });
    };
    const timer = setInterval(launch, PROBE_INTERVAL_MS);
    launch();
  });
}

/** One probe put through `hostPort`; true when acknowledged. */
async function writeThrough(system: SystemName, hostPort: string, path: string, body: string,
  agent: http.Agent, signal: AbortSignal): Promise<boolean> {
  const options = { agent, timeoutMs: PROBE_TIMEOUT_MS, signal, keepBody: false };
  try {
    const answer = await post(hostPort, path, body, options);
    if (system === 'conclave' && answer.status === 307 && answer.location !== undefined) {
      return (await post(hostPortOf(answer.location), path, body, options)).status === 200;
    }
    return answer.status === 200;
  } catch {
    return false;
  }
}

function find(runs: readonly FailoverRun[], system: SystemName,
  timing: ClusterTiming): FailoverRun | undefined {
  return runs.find((r) => r.system === system && r.timing === timing);
}

/**
 * `failover (ms from kill -9 ..., min/median/max over N kills): heartbeat 100 / election 1000:
 * conclave a/b/c, etcd d/e/f, median conclave/etcd r; ...`; with fault `stop`, `failover,
 * silent leader (ms from SIGSTOP ..., over N pauses): ...`.
 */
function finalLine(runs: readonly FailoverRun[], context: BenchContext,
  fault: FailoverFault): string {
  const { signal, round } = FAULT_WORDS[fault];
  const spread = (run: FailoverRun | undefined): string => run === undefined ? '–'
    : `${fmt(run.spread.minMs)}/${fmt(run.spread.medianMs)}/${fmt(run.spread.maxMs)}` +
      (run.failedKills > 0 ? ` (${run.failedKills} ${round}s never recovered)` : '');
  const parts = FAILOVER_TIMINGS.map((timing) => {
    const c = find(runs, 'conclave', timing);
    const e = find(runs, 'etcd', timing);
    const head = `heartbeat ${timing.heartbeatMs} / election ${timing.electionTimeoutMs}: ` +
      `conclave ${spread(c)}`;
    if (e === undefined) return head;
    const medians = fmt(ratio(c?.spread.medianMs, e.spread.medianMs));
    return `${head}, etcd ${spread(e)}, median conclave/etcd ${medians}`;
  });
  const tail = context.systems.includes('etcd') ? '' : ' (add --vs etcd for the reference)';
  const name = fault === 'kill' ? 'failover' : 'failover, silent leader';
  return `${name} (ms from ${signal} of the leader to a write acknowledged through a ` +
    `survivor, min/median/max over ${context.options.kills} ${round}s): ` +
    `${parts.join('; ')}${tail}`;
}
