/**
 * gossip-processes: the gossip membership at scale in real processes. N Conclave members
 * (default 100) over real UDP and TCP on loopback, LOCAL profile: the survivors-to-be in a few
 * processes of several members each (each member with its own sockets), the tenth that will
 * die in processes of one member each, the oldest member among them. After the cluster formed
 * and named the oldest as leader, the tenth is killed with kill -9, all at once. Measured:
 * until every survivor holds every victim dead, and names the next-oldest member as leader;
 * both must happen within the documented bound (docs/gossip.md, "Crash of a tenth"):
 *
 *   swimDeathDeclarationBoundMs(N) + 20 × probeIntervalMs
 *
 * and no survivor may be declared dead meanwhile.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SWIM_DEFAULTS_LOCAL, swimDeathDeclarationBoundMs,
} from '../../dist/src/core/swim/index.js';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/context.js';
import { GossipHosts, type Host } from '../lib/gossip-hosts.js';
import { fmt } from '../lib/stats.js';
import { barPanelsSvg } from '../lib/bar-panels.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONCLAVE_HOST = join(REPO_ROOT, 'bench', 'gossip', 'member-host.ts');
const SURVIVOR_PROCESSES = 3;
/** Members join over this span (in every host at once). Unit: ms. */
const JOIN_SPREAD_MS = 10_000;

export interface ProcessesFigures {
  readonly suite: 'gossip-processes';
  readonly members: number;
  readonly processes: number;
  readonly victims: readonly string[];
  readonly oldest: string;
  readonly nextOldest: string;
  readonly boundMs: number;
  readonly formedMs: number;
  /** kill -9 → first own suspicion of any victim. Unit: ms. */
  readonly firstSuspectMs: number | undefined;
  /** kill -9 → first survivor holding a victim dead. Unit: ms. */
  readonly firstDeadMs: number | undefined;
  /** kill -9 → every survivor holds every victim dead. Unit: ms. */
  readonly allDeadMs: number;
  /** kill -9 → every survivor names the next-oldest member as leader. Unit: ms. */
  readonly leaderAgreedMs: number;
  readonly leaderGeneration: number | undefined;
  readonly falseDead: number;
}

export const gossipProcessesSuite: Suite = {
  name: 'gossip-processes',
  summary: '--members real members on loopback (default 100), kill -9 a tenth with the oldest',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const figures = await measure(context);
    return {
      finalLine: finalLine(figures), figures, chartSvg: chart(figures),
      resultName: 'gossip-processes',
    };
  },
};

async function measure(context: BenchContext): Promise<ProcessesFigures> {
  const n = context.options.gossipMembers;
  const hosts = new GossipHosts(context.processes, 'conclave');
  const victims = Array.from({ length: Math.max(1, Math.round(n / 10)) },
    (_, i) => `v${String(i + 1).padStart(3, '0')}`);
  const survivors = Array.from({ length: n - victims.length },
    (_, i) => `s${String(i + 1).padStart(3, '0')}`);
  const args = (names: readonly string[], seeds: string | undefined, spreadMs: number): string[] =>
    ['--import', 'tsx', CONCLAVE_HOST, '--profile', 'local', '--cluster-name',
      'bench-gossip-processes', '--names', names.join(','), '--join-spread-ms', String(spreadMs),
      ...(seeds === undefined ? [] : ['--seeds', seeds])];
  const startMs = Date.now();
  const victimHosts: Host[] = [];
  try {
    // The oldest member bootstraps in its own process; everyone joins through it.
    victimHosts.push(hosts.start(victims[0]!, process.execPath, args([victims[0]!], undefined, 0)));
    await hosts.until('the oldest member listening', 60_000,
      () => hosts.addresses.has(victims[0]!));
    const seed = hosts.addresses.get(victims[0]!)!;
    for (let p = 0; p < SURVIVOR_PROCESSES; p++) {
      const mine = survivors.filter((_, i) => i % SURVIVOR_PROCESSES === p);
      hosts.start(`survivors-${p + 1}`, process.execPath, args(mine, seed, JOIN_SPREAD_MS));
    }
    // The other victims start one by one over the same span, so their ages interleave.
    for (const victim of victims.slice(1)) {
      await sleep(JOIN_SPREAD_MS / victims.length);
      victimHosts.push(hosts.start(victim, process.execPath, args([victim], seed, 0)));
    }
    const formDeadlineMs = 120_000 + 1000 * n;
    await hosts.until('every member admitted', formDeadlineMs,
      () => hosts.hosts.every((h) => h.ready));
    await hosts.until('every member sees every other and names the oldest', formDeadlineMs,
      () => hosts.converged() && everyoneNames(hosts, victims[0]!));
    const formedMs = Date.now() - startMs;
    hosts.counting = true;
    const nextOldest = oldestOf(hosts, survivors);
    const killedAtMs = Date.now();
    for (const victim of victims) hosts.killed.add(victim);
    await Promise.all(victimHosts.map((h) => context.processes.kill9(h.process)));
    context.say(`gossip-processes: kill -9 of ${victims.length} members (the oldest, ` +
      `${victims[0]}, among them); the next oldest is ${nextOldest}`);
    const boundMs = swimDeathDeclarationBoundMs(SWIM_DEFAULTS_LOCAL, n)
      + 20 * SWIM_DEFAULTS_LOCAL.probeIntervalMs;
    const allDeadMs = await hosts.until('every survivor holds every victim dead', boundMs,
      () => victims.every((v) => hosts.deadEverywhere(v)));
    const leaderAgreedMs = await hosts.until(`every survivor names ${nextOldest}`,
      Math.max(1, boundMs - allDeadMs), () => everyoneNames(hosts, nextOldest)) + allDeadMs;
    const deadTimes = [...hosts.deadAt.entries()]
      .filter(([key]) => victims.includes(key.split('>')[1]!)).map(([, t]) => t - killedAtMs);
    const suspects = victims.map((v) => hosts.firstSuspectSince(v, killedAtMs))
      .filter((t): t is number => t !== undefined).map((t) => t - killedAtMs);
    const leader = hosts.views.get(survivors[0]!)?.leader;
    return {
      suite: 'gossip-processes', members: n, processes: SURVIVOR_PROCESSES + victims.length,
      victims, oldest: victims[0]!, nextOldest, boundMs, formedMs,
      firstSuspectMs: suspects.length === 0 ? undefined : Math.min(...suspects),
      firstDeadMs: deadTimes.length === 0 ? undefined : Math.min(...deadTimes),
      allDeadMs, leaderAgreedMs,
      leaderGeneration: leader === undefined ? undefined : hosts.generations.get(survivors[0]!),
      falseDead: hosts.falseDeaths.length,
    };
  } finally {
    for (const host of hosts.hosts) {
      if (host.process.child.exitCode === null) hosts.send(host, 'quit');
    }
    await Promise.all(hosts.hosts.map((h) => Promise.race([h.process.exited, sleep(5_000)])));
    await context.processes.stopAll(2_000);
  }
}

function everyoneNames(hosts: GossipHosts, leader: string): boolean {
  return hosts.liveMembers.every((name) => hosts.views.get(name)?.leader === leader);
}

/** The oldest of `names` by the ages the members announced (smallest age, then name). */
function oldestOf(hosts: GossipHosts, names: readonly string[]): string {
  const aged = names.map((name) => ({ name, age: hosts.ages.get(name) ?? Infinity }));
  aged.sort((a, b) => a.age - b.age || (a.name < b.name ? -1 : 1));
  return aged[0]!.name;
}

function finalLine(f: ProcessesFigures): string {
  const s = (ms: number | undefined): string => (ms === undefined ? '–' : fmt(ms / 1000));
  return `gossip-processes (${f.members} real members in ${f.processes} processes on loopback, ` +
    `LOCAL profile; kill -9 of ${f.victims.length} with the oldest): first suspect ` +
    `${s(f.firstSuspectMs)} s, first dead ${s(f.firstDeadMs)} s, every survivor holds every ` +
    `victim dead ${s(f.allDeadMs)} s, every survivor names the next oldest (${f.nextOldest}` +
    `${f.leaderGeneration === undefined ? '' : `, generation ${f.leaderGeneration}`}) ` +
    `${s(f.leaderAgreedMs)} s; bound ${s(f.boundMs)} s; survivors declared dead: ${f.falseDead}` +
    `; formed in ${s(f.formedMs)} s`;
}

function chart(f: ProcessesFigures): string {
  return barPanelsSvg({
    title: `gossip: ${f.members} real members, kill -9 of ${f.victims.length} with the oldest`,
    subtitle: `seconds after the kill (bound ${fmt(f.boundMs / 1000)} s)`,
    series: [{ name: 'conclave', colour: '#2f6fb0' }],
    panels: [{
      title: 'kill -9 → ... (s)',
      categories: ['first suspect', 'first dead', 'all dead everywhere', 'leader agreed'],
      values: { conclave: [f.firstSuspectMs, f.firstDeadMs, f.allDeadMs, f.leaderAgreedMs]
        .map((ms) => (ms === undefined ? undefined : ms / 1000)) },
    }],
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
