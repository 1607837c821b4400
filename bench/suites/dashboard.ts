/**
 * dashboard: what the dashboard costs (issue 19): 5 members, 1,000 leases each with a key, and
 * puts paced at 500/s (open loop, lib/load-client.ts's `ratePerS`) sent to the leader.
 * - The feed's CPU: three rounds of two windows, each member's CPU (/proc) with no page, then
 *   with a page's feed subscribed to the leader's /ui/feed (a WebSocket read as the page reads
 *   it: with a browser on the same two cores, the members' CPU would drop as the browser takes
 *   the cores, and the put rate with it). The difference is the feed's cost (with no page a
 *   member holds no peer links and sends no frames); the median of the rounds' differences.
 * - The page: two windows with one headless Chromium page on the leader's /ui/ clicking through
 *   the tabs, under Chromium's performance trace (main-thread tasks, by wall and by CPU time)
 *   and an in-page probe (frame gaps, long tasks): see dashboard-page.ts.
 */
import { WebSocket } from 'ws';
import { connect } from '../../src/client/index.js';
import type { BenchCluster, BenchMember, ClusterTiming } from '../lib/cluster.js';
import { newCluster, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import type { LoadClientMessage, LoadClientOptions, LoadClientResult } from '../lib/load-client.js';
import { LOAD_CLIENT } from '../lib/measure.js';
import { sleep, type TrackedProcess } from '../lib/processes.js';
import { fmt } from '../lib/stats.js';
import { PUT_WORKLOAD } from '../lib/wire.js';
import { dashboardChart } from './dashboard-chart.js';
import { launchChromium, STALL_MS, watchPage, type PageFigures } from './dashboard-page.js';

const TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });
const MEMBERS = 5;
const LEASES = 1_000;
const PUTS_PER_S = 500;
/** Lanes of the paced load: enough that a few slow puts do not hold the rate back. */
const LOAD_LANES = 128;
/** Pairs of windows (no page, a page's feed subscribed), for the members' CPU. */
const ROUNDS = 3;
/** Windows with Chromium's page open, for the page's own figures. */
const PAGE_ROUNDS = 2;
/** After a page opens or closes, before a window: links to peers open or close. Unit: ms. */
const SETTLE_MS = 2_000;
/** Lease TTL: longer than any run, so that no lease expires while measured. Unit: ms. */
const LEASE_TTL_MS = 900_000;

export interface MemberCost {
  readonly name: string;
  readonly role: 'leader' | 'follower';
  /** Median over the rounds, 100 = one core. Unit: %. */
  readonly cpuPercentNoPage: number;
  readonly cpuPercentWithPage: number;
  /** withPage − noPage. Unit: % of a core. */
  readonly feedPercentOfACore: number;
  /** Each round's figures, for the spread. Unit: %. */
  readonly rounds: readonly { readonly noPage: number; readonly withPage: number }[];
}

export interface DashboardFigures {
  readonly suite: 'dashboard';
  readonly members: number;
  readonly leases: number;
  readonly putsPerSAsked: number;
  readonly putsPerSDone: number;
  readonly putErrors: number;
  readonly putLatencyMsP99: number;
  /** Puts committed per second in each round's two windows (from the leader's index). */
  readonly putsPerSByRound: readonly { readonly noPage: number; readonly withPage: number }[];
  readonly windowMs: number;
  readonly rounds: number;
  /** Leader first. */
  readonly cost: readonly MemberCost[];
  readonly pages: readonly PageFigures[];
}

export const dashboardSuite: Suite = {
  name: 'dashboard',
  summary: 'the dashboard feed\'s CPU per member and the page\'s longest task, 5 members, ' +
    '1,000 leases, 500 puts/s',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const cluster = newCluster('conclave', TIMING, context, 'dashboard');
    try {
      context.say(`dashboard: starting a ${MEMBERS}-member conclave cluster`);
      await cluster.start(MEMBERS);
      const figures = await measure(context, cluster);
      return { finalLine: finalLine(figures), figures, chartSvg: dashboardChart(figures) };
    } catch (error) {
      for (const m of cluster.members) context.say(`${m.name} log:\n${cluster.logTail(m)}`);
      throw error;
    } finally {
      await cluster.stop();
    }
  },
};

async function measure(context: BenchContext, cluster: BenchCluster): Promise<DashboardFigures> {
  let leader = await cluster.waitHealthy();
  await grantLeases(context, cluster);
  leader = await cluster.waitHealthy();
  const windowMs = context.options.windowMs;
  const load = startLoad(context, leader, windowMs);
  await load.windowStarted;
  context.progress.plan(ROUNDS + PAGE_ROUNDS);
  const samples = new Map<string, { noPage: number; withPage: number }[]>();
  const putRates: { noPage: number; withPage: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await sleep(SETTLE_MS);
    const noPage = await cpuAndPutsOver(cluster, leader, windowMs);
    const feed = await subscribeFeed(leader);
    await sleep(SETTLE_MS);
    const withPage = await cpuAndPutsOver(cluster, leader, windowMs);
    const received = feed.close();
    putRates.push({ noPage: noPage.putsPerS, withPage: withPage.putsPerS });
    for (const [name, percent] of noPage.cpu) {
      const list = samples.get(name) ?? [];
      list.push({ noPage: percent, withPage: withPage.cpu.get(name) ?? Number.NaN });
      samples.set(name, list);
    }
    context.progress.step(`dashboard: round ${round}/${ROUNDS}: ` +
      `${describeRound(noPage.cpu, withPage.cpu)}; puts ${fmt(noPage.putsPerS)} → ` +
      `${fmt(withPage.putsPerS)}/s; feed ${received.frames} frames, ` +
      `${fmt(received.bytes / 1024)} KiB`);
  }
  const pages = await measurePages(context, cluster, leader, windowMs);
  const result = await load.stop();
  return figuresOf(cluster, leader, { samples, putRates, pages, result, windowMs });
}

/** Chromium windows: the page open on the leader, its trace, and the members' CPU meanwhile. */
async function measurePages(context: BenchContext, cluster: BenchCluster, leader: BenchMember,
  windowMs: number): Promise<PageFigures[]> {
  const browser = await launchChromium(context.say);
  const pages: PageFigures[] = [];
  try {
    for (let round = 1; round <= PAGE_ROUNDS; round++) {
      let cpu = new Map<string, number>();
      const page = await watchPage(browser, `http://${leader.clientHostPort}/ui/`, MEMBERS,
        windowMs, async () => {
          cpu = (await cpuAndPutsOver(cluster, leader, windowMs)).cpu;
        });
      pages.push(page);
      const t = page.trace;
      context.progress.step(`dashboard: page ${round}/${PAGE_ROUNDS}: longest task ` +
        `${t.longestTaskMs} ms (its CPU ${t.longestTaskCpuMs} ms), ${t.tasksOverStallMs} over ` +
        `${STALL_MS} ms (${t.tasksOverStallMsByCpu} by their CPU), longest frame gap ` +
        `${page.probe.longestFrameGapMs} ms; members meanwhile: ` +
        [...cpu].map(([name, percent]) => `${name} ${fmt(percent)} %`).join(', '));
    }
  } finally {
    await browser.close();
  }
  return pages;
}

/**
 * What a page costs a member, without a browser's own CPU on the same cores: one WebSocket on
 * /ui/feed, read as the page reads it (every frame parsed, a message holding one a line), with
 * the leases tab in view (the costliest: the lease list comes too). Counts what it received.
 */
async function subscribeFeed(leader: BenchMember): Promise<{
  close(): { frames: number; bytes: number };
}> {
  const socket = new WebSocket(`ws://${leader.clientHostPort}/ui/feed`);
  let frames = 0;
  let bytes = 0;
  socket.on('message', (data: Buffer) => {
    bytes += data.length;
    for (const line of data.toString().split('\n')) {
      frames++;
      JSON.parse(line);
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'view', id: 1, leases: true }));
  return { close: () => {
    socket.terminate();
    return { frames, bytes };
  } };
}

/** 1,000 leases with a key each (`svc/N`), granted through the shipped client, 50 at a time. */
async function grantLeases(context: BenchContext, cluster: BenchCluster): Promise<void> {
  context.say(`dashboard: granting ${LEASES} leases, each with a key`);
  const client = connect({ endpoints: cluster.members.map((m) => m.clientHostPort) });
  try {
    for (let i = 0; i < LEASES; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, LEASES - i) }, async (_, j) => {
        const lease = await client.grantLease({ ttlMs: LEASE_TTL_MS, autoKeepAlive: false });
        await client.kv.put(`svc/${i + j}`, 'up', { lease: lease.id });
      }));
    }
  } finally {
    await client.close();
  }
}

interface Load {
  readonly windowStarted: Promise<void>;
  stop(): Promise<LoadClientResult>;
}

/** The paced put load in its own process; its window runs until `stop`. */
function startLoad(context: BenchContext, leader: BenchMember, windowMs: number): Load {
  const options: LoadClientOptions = {
    system: 'conclave', endpoint: leader.clientHostPort, inflight: LOAD_LANES,
    ratePerS: PUTS_PER_S, warmupMs: context.options.warmupMs,
    // Long enough for every round; the harness ends it with `stop`.
    windowMs: 10 * ROUNDS * (2 * windowMs + 2 * SETTLE_MS) + 60_000, ...PUT_WORKLOAD,
  };
  const client: TrackedProcess = context.processes.spawn('dashboard load client',
    process.execPath, ['--import', 'tsx', LOAD_CLIENT, JSON.stringify(options)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let started: () => void = () => undefined;
  const windowStarted = new Promise<void>((resolve) => (started = resolve));
  const done = new Promise<LoadClientResult>((resolve, reject) => {
    client.child.on('message', (message: LoadClientMessage) => {
      if (message.kind === 'window-start') started();
      else resolve(message.result);
    });
    void client.exited.then(() => reject(new Error('the dashboard load client exited early')));
  });
  return {
    windowStarted: Promise.race([windowStarted, done.then(() => undefined)]),
    stop: async () => {
      client.child.send({ kind: 'stop' });
      const result = await done;
      await client.exited;
      return result;
    },
  };
}

/** Each running member's CPU over `ms` (100 = one core busy), and the puts committed. */
async function cpuAndPutsOver(cluster: BenchCluster, leader: BenchMember, ms: number):
  Promise<{ cpu: Map<string, number>; putsPerS: number }> {
  const indexBefore = (await cluster.leaderView(leader))?.index;
  const before = cluster.cpuMsByMember();
  const startMs = performance.now();
  await sleep(ms);
  const after = cluster.cpuMsByMember();
  const elapsedMs = performance.now() - startMs;
  const indexAfter = (await cluster.leaderView(leader))?.index;
  const cpu = new Map<string, number>();
  for (const [name, cpuMs] of after) {
    const was = before.get(name);
    if (was !== undefined) cpu.set(name, (100 * (cpuMs - was)) / elapsedMs);
  }
  // Each put is one Raft entry (the harness's own requests are a handful).
  const putsPerS = indexBefore === undefined || indexAfter === undefined ? Number.NaN
    : (1000 * (indexAfter - indexBefore)) / elapsedMs;
  return { cpu, putsPerS };
}

function describeRound(noPage: Map<string, number>, withPage: Map<string, number>): string {
  return [...noPage].map(([name, percent]) =>
    `${name} ${fmt(percent)} → ${fmt(withPage.get(name) ?? Number.NaN)} %`).join(', ');
}

function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Measured {
  readonly samples: Map<string, { noPage: number; withPage: number }[]>;
  readonly putRates: readonly { noPage: number; withPage: number }[];
  readonly pages: readonly PageFigures[];
  readonly result: LoadClientResult;
  readonly windowMs: number;
}

function figuresOf(cluster: BenchCluster, leader: BenchMember, m: Measured): DashboardFigures {
  const cost: MemberCost[] = cluster.members.map((member) => {
    const rounds = m.samples.get(member.name) ?? [];
    const role = member.name === leader.name ? 'leader' as const : 'follower' as const;
    return { name: member.name, role,
      cpuPercentNoPage: median(rounds.map((r) => r.noPage)),
      cpuPercentWithPage: median(rounds.map((r) => r.withPage)),
      // The median of each round's difference: a round's two windows share the machine's load.
      feedPercentOfACore: median(rounds.map((r) => r.withPage - r.noPage)), rounds };
  }).sort((a, b) => (a.role === 'leader' ? -1 : b.role === 'leader' ? 1 : 0));
  return {
    suite: 'dashboard', members: MEMBERS, leases: LEASES, putsPerSAsked: PUTS_PER_S,
    putsPerSDone: (1000 * m.result.ops) / m.result.windowMs, putErrors: m.result.errors,
    putLatencyMsP99: m.result.latency.p99Ms, putsPerSByRound: m.putRates,
    windowMs: m.windowMs, rounds: ROUNDS, cost, pages: m.pages,
  };
}

function finalLine(f: DashboardFigures): string {
  const serving = f.cost[0]!;
  const others = f.cost.slice(1).map((c) => c.feedPercentOfACore);
  const longest = (pick: (p: PageFigures) => number): number => Math.max(...f.pages.map(pick));
  const count = (pick: (p: PageFigures) => number): number =>
    f.pages.reduce((n, p) => n + pick(p), 0);
  return `dashboard (${f.members} members, ${f.leases} leases, puts ${fmt(f.putsPerSDone)}/s ` +
    `of ${f.putsPerSAsked} asked, ${f.rounds} × ${f.windowMs / 1000} s windows each way): ` +
    `feed CPU ${fmt(serving.feedPercentOfACore)} % of a core on the serving member ` +
    `(${serving.name}, leader; ${fmt(serving.cpuPercentNoPage)} → ` +
    `${fmt(serving.cpuPercentWithPage)} %), ${fmt(Math.max(...others))} % at most on the others ` +
    `(goal < 2 %); page: longest main-thread task ${longest((p) => p.trace.longestTaskMs)} ms ` +
    `(largest own CPU ${longest((p) => p.trace.longestTaskCpuMs)} ms), ` +
    `${count((p) => p.trace.tasksOverStallMs)} over ${STALL_MS} ms ` +
    `(${count((p) => p.trace.tasksOverStallMsByCpu)} by their own CPU), longest gap between ` +
    `frames ${longest((p) => p.probe.longestFrameGapMs)} ms (goal: none over ${STALL_MS} ms)`;
}
