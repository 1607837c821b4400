/**
 * gossip: SWIM membership at scale, from the simulator (the real member code, seeded, in
 * virtual time: `conclave sim --scenario gossip`). Two seeds, each run with Lifeguard on and
 * off under the same faults: a calm one and a storm. Per run: how fast a crash is detected and
 * how fast the news reaches everyone, false deaths per member-hour, and messages and bytes per
 * member per second. No etcd side: etcd has no gossip; the Lifeguard off/on ratio gives the
 * context instead. 1,000 members (the default) takes a long time; `--members 100` takes seconds.
 */
import { CONCLAVE_BIN } from '../lib/conclave-cluster.js';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/context.js';
import { fmt, ratio } from '../lib/stats.js';
import { gossipChart } from './gossip-chart.js';
import { gossipVsMemberlist } from './gossip-memberlist.js';

/**
 * The seeds measured. The scenario draws each seed's faults from the seed; every seed has
 * random crashes, the coordinator's crash, a partition that heals, and a graceful leave.
 */
export const GOSSIP_CONDITIONS: readonly GossipCondition[] = Object.freeze([
  {
    name: 'calm', seed: 4,
    faults: 'base loss 0.96 %, clock drift (besides the crashes, partition and leave)',
  },
  {
    name: 'storm', seed: 3,
    faults: 'pauses, slow members, loss bursts of 5–20 %, latency spikes, bounces, bad links, ' +
      'clock drift (besides the crashes, partition and leave)',
  },
]);

export interface GossipCondition {
  readonly name: string;
  readonly seed: number;
  /** What the scenario drew for this seed when the suite was written (see bench/README.md). */
  readonly faults: string;
}

/** The scenario's own report, as `conclave sim --json` prints it (the fields used here). */
interface Percentiles {
  readonly p50?: number;
  readonly p99?: number;
  readonly count: number;
}

interface ScenarioSummary {
  readonly lifeguard: boolean;
  readonly memberHours: number;
  readonly crashes: number;
  readonly firstSuspicionMs: Percentiles;
  readonly firstDeadMs: Percentiles;
  readonly everyoneDeadMs: Percentiles;
  readonly falseDeadDeclarationsPer100MemberHours: number;
  readonly falseDeadIncidentsPer100MemberHours: number;
  readonly falseDeadViewsPer100MemberHours: number;
  readonly messagesPerMemberPerS: number;
  readonly bytesPerMemberPerS: number;
  readonly leaderAgreementMs: Readonly<Record<string, { readonly settled: Percentiles }>>;
}

export interface GossipRun {
  readonly condition: string;
  readonly seed: number;
  readonly lifeguard: boolean;
  readonly members: number;
  /** Whether every checker of the scenario held. */
  readonly ok: boolean;
  readonly memberHours: number;
  readonly crashes: number;
  /** Crash to the first suspicion by any member, p50 and p99 over the crashes. Unit: ms. */
  readonly firstSuspicionMsP50: number;
  /** Crash to the first 'dead' declaration (detection). Unit: ms. */
  readonly firstDeadMsP50: number;
  readonly firstDeadMsP99: number;
  /** Crash to every live member holding it dead (detection + dissemination). Unit: ms. */
  readonly everyoneDeadMsP50: number;
  readonly everyoneDeadMsP99: number;
  /** everyoneDeadMsP50 − firstDeadMsP50: about how long the news takes to spread. Unit: ms. */
  readonly disseminationMsP50: number;
  /** A member declared a live member dead (its own suspicion ran out), per member-hour. */
  readonly falseDeadDeclarationsPerMemberHour: number;
  /** Live members whose membership was wrongly ended, per member-hour. */
  readonly falseDeadIncidentsPerMemberHour: number;
  readonly messagesPerMemberPerS: number;
  readonly bytesPerMemberPerS: number;
  /** The coordinator crashes: time until every member names the same new leader. Unit: ms. */
  readonly leaderAgreementAfterCrashMsP50: number;
  /** Wall-clock time the simulation took. Unit: s. */
  readonly wallS: number;
}

export const gossipSuite: Suite = {
  name: 'gossip',
  summary: 'simulated SWIM (--members): detection, false deaths, load; Lifeguard on/off',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    if (context.reference === 'memberlist') return gossipVsMemberlist(context);
    const runs: GossipRun[] = [];
    for (const condition of GOSSIP_CONDITIONS) {
      runs.push(...await simulate(context, condition));
    }
    const figures = {
      suite: 'gossip', members: context.options.gossipMembers, profile: 'local',
      strategy: 'keep-majority', conditions: GOSSIP_CONDITIONS, runs,
      lifeguardOffOverOn: GOSSIP_CONDITIONS.map((c) => offOverOn(runs, c.name)),
    };
    return { finalLine: finalLine(runs, context), figures, chartSvg: gossipChart(runs) };
  },
};

/** One `conclave sim --scenario gossip` process: the seed with Lifeguard on and off. */
async function simulate(context: BenchContext, condition: GossipCondition): Promise<GossipRun[]> {
  const members = context.options.gossipMembers;
  context.say(`gossip: simulating ${members} members, ${condition.name} ` +
    `(seed ${condition.seed}), Lifeguard on and off` +
    (members >= 500 ? ': this takes a while (minutes per run)' : ''));
  const startMs = performance.now();
  const sim = context.processes.spawn(`gossip sim ${condition.name}`, process.execPath,
    [CONCLAVE_BIN, 'sim', '--scenario', 'gossip', '--members', String(members),
      '--seed', String(condition.seed), '--seeds', '1', '--lifeguard', 'both', '--jobs', '1',
      '--json'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  sim.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  await sim.exited;
  const wallS = (performance.now() - startMs) / 1000;
  // Exit 1 is a violation (still a report, marked not ok); anything else is no report at all.
  if (sim.child.exitCode !== 0 && sim.child.exitCode !== 1) {
    throw new Error(`gossip: conclave sim exited with ${String(sim.child.exitCode)}`);
  }
  const report = JSON.parse(stdout) as {
    ok: boolean; summary: { summaries: ScenarioSummary[] };
  };
  const runs = report.summary.summaries.map((s) =>
    runOf(condition, members, report.ok, s, wallS / report.summary.summaries.length));
  for (const run of runs) context.say(`gossip: ${describe(run)}`);
  return runs;
}

function runOf(condition: GossipCondition, members: number, ok: boolean, s: ScenarioSummary,
  wallS: number): GossipRun {
  const ms = (value: number | undefined): number => value ?? Number.NaN;
  return {
    condition: condition.name, seed: condition.seed, lifeguard: s.lifeguard, members, ok,
    memberHours: s.memberHours, crashes: s.crashes,
    firstSuspicionMsP50: ms(s.firstSuspicionMs.p50),
    firstDeadMsP50: ms(s.firstDeadMs.p50), firstDeadMsP99: ms(s.firstDeadMs.p99),
    everyoneDeadMsP50: ms(s.everyoneDeadMs.p50), everyoneDeadMsP99: ms(s.everyoneDeadMs.p99),
    disseminationMsP50: ms(s.everyoneDeadMs.p50) - ms(s.firstDeadMs.p50),
    falseDeadDeclarationsPerMemberHour: s.falseDeadDeclarationsPer100MemberHours / 100,
    falseDeadIncidentsPerMemberHour: s.falseDeadIncidentsPer100MemberHours / 100,
    messagesPerMemberPerS: s.messagesPerMemberPerS, bytesPerMemberPerS: s.bytesPerMemberPerS,
    leaderAgreementAfterCrashMsP50: ms(s.leaderAgreementMs['coordinator-crash']?.settled.p50),
    wallS,
  };
}

function describe(r: GossipRun): string {
  return `${r.condition}, Lifeguard ${r.lifeguard ? 'on' : 'off'}${r.ok ? '' : ' (VIOLATION)'}: ` +
    `first 'dead' p50 ${fmt(r.firstDeadMsP50 / 1000)} s, everyone p50 ` +
    `${fmt(r.everyoneDeadMsP50 / 1000)} s, false 'dead' ` +
    `${fmt(r.falseDeadDeclarationsPerMemberHour)} per member-hour, ` +
    `${fmt(r.messagesPerMemberPerS)} messages and ${fmt(r.bytesPerMemberPerS)} B per member ` +
    `per s (${fmt(r.memberHours)} member-hours, ${r.crashes} crashes)`;
}

function find(runs: readonly GossipRun[], condition: string,
  lifeguard: boolean): GossipRun | undefined {
  return runs.find((r) => r.condition === condition && r.lifeguard === lifeguard);
}

/** Lifeguard off over on, per figure: above 1, Lifeguard lowers the figure. */
export interface LifeguardRatios {
  readonly condition: string;
  readonly falseDeadDeclarations: number;
  readonly firstDeadMsP50: number;
  readonly messagesPerMemberPerS: number;
  readonly bytesPerMemberPerS: number;
}

function offOverOn(runs: readonly GossipRun[], condition: string): LifeguardRatios {
  const on = find(runs, condition, true);
  const off = find(runs, condition, false);
  const r = (pick: (run: GossipRun) => number): number =>
    ratio(off === undefined ? undefined : pick(off), on === undefined ? undefined : pick(on));
  return {
    condition,
    falseDeadDeclarations: r((x) => x.falseDeadDeclarationsPerMemberHour),
    firstDeadMsP50: r((x) => x.firstDeadMsP50),
    messagesPerMemberPerS: r((x) => x.messagesPerMemberPerS),
    bytesPerMemberPerS: r((x) => x.bytesPerMemberPerS),
  };
}

/** `gossip (N members, ...): calm (seed 4): ...; storm (seed 3): ...; Lifeguard off/on: ...` */
function finalLine(runs: readonly GossipRun[], context: BenchContext): string {
  const parts = GOSSIP_CONDITIONS.map((c) => {
    const on = find(runs, c.name, true);
    const off = find(runs, c.name, false);
    if (on === undefined) return `${c.name}: –`;
    const s = (ms: number): string => fmt(ms / 1000);
    const offOn = (pick: (run: GossipRun) => number): string =>
      fmt(ratio(off === undefined ? undefined : pick(off), pick(on)));
    return `${c.name} (seed ${c.seed}${on.ok ? '' : ', VIOLATION'}): first 'dead' p50/p99 ` +
      `${s(on.firstDeadMsP50)}/${s(on.firstDeadMsP99)} s, everyone holds it dead p50/p99 ` +
      `${s(on.everyoneDeadMsP50)}/${s(on.everyoneDeadMsP99)} s (dissemination ≈ ` +
      `${s(on.disseminationMsP50)} s), false 'dead' ` +
      `${fmt(on.falseDeadDeclarationsPerMemberHour)} per member-hour, ` +
      `${fmt(on.messagesPerMemberPerS)} messages and ${fmt(on.bytesPerMemberPerS)} B per ` +
      'member per s; Lifeguard off/on: false \'dead\' ' +
      `${offOn((r) => r.falseDeadDeclarationsPerMemberHour)}, first 'dead' p50 ` +
      `${offOn((r) => r.firstDeadMsP50)}, bytes ${offOn((r) => r.bytesPerMemberPerS)}`;
  });
  return `gossip (${context.options.gossipMembers} simulated members, SWIM profile local, ` +
    `Lifeguard on; no etcd side): ${parts.join('; ')}`;
}
