/**
 * The gossip scenario's report over all seeds, per Lifeguard setting: crash detection and
 * dissemination times, false death verdicts per 100 member-hours, load per member, and the
 * time for every member to agree on the emergent leader after each scripted event; with both
 * settings run, a closing line compares them fault for fault.
 */
import type { ScenarioOptions, SeedResult, SummaryReport } from '../../scenario.js';
import { formatNumber, quantile } from '../../stats.js';
import type { LeaderEventKind } from './gossip-checks.js';
import { rateInterval, rateRatioInterval, type Interval } from './rate-intervals.js';
import type { GossipFigures, GossipRunFigures } from './gossip-scenario.js';
import { gossipSettings } from './gossip-settings.js';
import { DEGRADING_KINDS } from './gossip-plan.js';

const LEADER_EVENTS: readonly { kind: LeaderEventKind; label: string }[] = [
  { kind: 'coordinator-crash', label: 'after the coordinator crashes' },
  { kind: 'partition-heal', label: 'after the partition heals' },
  { kind: 'coordinator-leave', label: 'after the coordinator leaves' },
];

interface Percentiles {
  readonly p50: number | undefined;
  readonly p99: number | undefined;
  readonly count: number;
}

interface LifeguardSummary {
  readonly lifeguard: boolean;
  readonly memberHours: number;
  readonly crashes: number;
  readonly crashesIncomplete: number;
  readonly firstSuspicionMs: Percentiles;
  readonly firstDeadMs: Percentiles;
  readonly everyoneDeadMs: Percentiles;
  readonly perMemberDeadMs: Percentiles;
  readonly falseDeadViews: number;
  readonly falseDeadDeclarations: number;
  readonly falseDeadIncidents: number;
  readonly falseDeadViewsPer100MemberHours: number;
  readonly falseDeadDeclarationsPer100MemberHours: number;
  readonly falseDeadIncidentsPer100MemberHours: number;
  /** 95 % interval of the incident rate (Garwood). Unit: per 100 member-hours. */
  readonly falseDeadIncidentsCi95: Interval;
  /** Runs whose incidents exceeded the false-dead bound (held only with Lifeguard on). */
  readonly runsOverBound: number;
  readonly falseDeadAllowed: number;
  readonly partitionVerdicts: number;
  readonly messagesPerMemberPerS: number;
  readonly bytesPerMemberPerS: number;
  readonly invalidMessages: number;
  readonly refutations: number;
  readonly rejoins: number;
  readonly leaderAgreementMs: Readonly<Record<string, {
    readonly first: Percentiles; readonly settled: Percentiles; readonly missed: number;
  }>>;
}

export function summarizeGossip(
  results: readonly SeedResult<GossipFigures>[], options: ScenarioOptions,
): SummaryReport {
  const settings = gossipSettings(options);
  const summaries = settings.lifeguardRuns.map((lifeguard) => summarizeRuns(lifeguard,
    results.flatMap((r) => r.figures.runs.filter((run) => run.lifeguard === lifeguard))));
  const runs = results.flatMap((r) => r.figures.runs);
  const simulatedS = runs.reduce((s, r) => s + r.simulatedMs / 1000, 0) / Math.max(1, runs.length);
  const losses = [...new Set(results.map((r) => formatNumber(r.figures.lossRate, 4)))];
  const lines = [
    `gossip: ${settings.members} members, ${settings.strategy}, profile ${settings.profile}, `
      + `loss ${losses.join('/')}; ${results.length} seeds, ${formatNumber(simulatedS, 0)} `
      + 'simulated s per run on average',
  ];
  for (const s of summaries) lines.push(...summaryLines(s));
  const hostile = runs.filter((r) => r.hostile !== undefined);
  if (hostile.length > 0) {
    const total = (pick: (h: NonNullable<GossipRunFigures['hostile']>) => number): number =>
      hostile.reduce((sum, r) =>
        sum + pick(r.hostile as NonNullable<GossipRunFigures['hostile']>), 0);
    lines.push(`hostile: ${total((h) => h.sent)} forged messages delivered, `
      + `${total((h) => h.malformed)} malformed ones refused by the validator, `
      + `${total((h) => h.rejected)} updates rejected by the bounds (members' counters)`);
  }
  const on = summaries.find((s) => s.lifeguard);
  const off = summaries.find((s) => !s.lifeguard);
  if (on !== undefined && off !== undefined) lines.push(comparisonLine(on, off));
  // Issue 21 holds storm and calm seeds to different rates, and one storm seed can carry a
  // pooled figure: each seed's own rate, and each class's, show which seed missed.
  const perSeed = results.map(seedFalseDead);
  lines.push(...perSeed.map(seedLine));
  const classes = (['storm', 'calm'] as const).map((weather) =>
    classFalseDead(weather, perSeed.filter((s) => s.weather === weather)))
    .filter((c) => c.seeds > 0);
  lines.push(...classes.map(classLine));
  return {
    lines, data: { members: settings.members, summaries, perSeed, classes }, violations: [],
  };
}

type Weather = 'storm' | 'calm';

interface RunFalseDead {
  readonly lifeguard: boolean;
  readonly memberHours: number;
  readonly declarations: number;
  readonly incidents: number;
  readonly allowed: number;
}

interface SeedFalseDead {
  readonly seed: number;
  /** Storm: the seed drew a fault that can make a live member look dead (DEGRADING_KINDS). */
  readonly weather: Weather;
  readonly kinds: readonly string[];
  readonly lossRate: number;
  readonly runs: readonly RunFalseDead[];
}

interface ClassFalseDead {
  readonly weather: Weather;
  readonly seeds: number;
  readonly runs: readonly RunFalseDead[];
}

function seedFalseDead(result: SeedResult<GossipFigures>): SeedFalseDead {
  const kinds = result.figures.kinds;
  return {
    seed: result.seed,
    weather: kinds.some((k) => DEGRADING_KINDS.includes(k)) ? 'storm' : 'calm',
    kinds, lossRate: result.figures.lossRate,
    runs: result.figures.runs.map((r) => ({
      lifeguard: r.lifeguard, memberHours: r.memberHours,
      declarations: r.falseDead.declarations, incidents: r.falseDead.incidents,
      allowed: r.falseDeadAllowed,
    })),
  };
}

function classFalseDead(weather: Weather, seeds: readonly SeedFalseDead[]): ClassFalseDead {
  const runs = [true, false].flatMap((lifeguard) => {
    const of = seeds.flatMap((s) => s.runs.filter((r) => r.lifeguard === lifeguard));
    if (of.length === 0) return [];
    const sum = (pick: (r: RunFalseDead) => number): number =>
      of.reduce((total, r) => total + pick(r), 0);
    return [{
      lifeguard, memberHours: sum((r) => r.memberHours), declarations: sum((r) => r.declarations),
      incidents: sum((r) => r.incidents), allowed: sum((r) => r.allowed),
    }];
  });
  return { weather, seeds: seeds.length, runs };
}

function runFalseDeadText(r: RunFalseDead): string {
  const per100 = (n: number): string =>
    formatNumber(r.memberHours > 0 ? (100 * n) / r.memberHours : 0);
  return `lifeguard ${r.lifeguard ? 'on' : 'off'} ${per100(r.declarations)} declarations, `
    + `${per100(r.incidents)} lives wrongly ended (${r.declarations} / ${r.incidents}`
    + `${r.lifeguard ? ` of ${r.allowed} allowed` : ''}; `
    + `${formatNumber(r.memberHours, 1)} member-hours)`;
}

/** Off over on, of lives wrongly ended; empty unless both settings ran. */
function offOverOnText(runs: readonly RunFalseDead[]): string {
  const on = runs.find((r) => r.lifeguard);
  const off = runs.find((r) => !r.lifeguard);
  if (on === undefined || off === undefined) return '';
  const rate = (r: RunFalseDead): number => (r.memberHours > 0 ? r.incidents / r.memberHours : 0);
  if (rate(on) === 0) return off.incidents === 0 ? '; off/on: none either way' : '; off/on: ∞';
  return `; off/on ${formatNumber(rate(off) / rate(on), 1)}×`;
}

function seedLine(s: SeedFalseDead): string {
  const drawn = s.kinds.length === 0 ? 'no swarm faults' : s.kinds.join(', ');
  return `seed ${s.seed} (${s.weather}: ${drawn}; loss ${formatNumber(s.lossRate, 4)}): `
    + "false 'dead' per 100 member-hours: "
    + s.runs.map(runFalseDeadText).join('; ') + offOverOnText(s.runs);
}

function classLine(c: ClassFalseDead): string {
  return `${c.weather} seeds (${c.seeds}): false 'dead' per 100 member-hours: `
    + c.runs.map(runFalseDeadText).join('; ') + offOverOnText(c.runs);
}

function summarizeRuns(lifeguard: boolean, runs: readonly GossipRunFigures[]): LifeguardSummary {
  const memberHours = runs.reduce((s, r) => s + r.memberHours, 0);
  const memberSeconds = memberHours * 3600;
  const crashes = runs.flatMap((r) => r.crashes);
  const defined = (values: (number | undefined)[]): number[] =>
    values.filter((v): v is number => v !== undefined);
  const per100 = (count: number): number => (memberHours > 0 ? (100 * count) / memberHours : 0);
  const sum = (pick: (r: GossipRunFigures) => number): number =>
    runs.reduce((s, r) => s + pick(r), 0);
  const views = sum((r) => r.falseDead.views);
  const declarations = sum((r) => r.falseDead.declarations);
  const incidents = sum((r) => r.falseDead.incidents);
  const leaderAgreementMs: Record<string, LifeguardSummary['leaderAgreementMs'][string]> = {};
  for (const { kind } of LEADER_EVENTS) {
    const samples = runs.flatMap((r) => r.agreements.filter((a) => a.kind === kind));
    leaderAgreementMs[kind] = {
      first: percentiles(defined(samples.map((a) => a.firstMs))),
      settled: percentiles(defined(samples.map((a) => a.settledMs))),
      missed: samples.filter((a) => a.settledMs === undefined).length,
    };
  }
  return {
    lifeguard, memberHours,
    crashes: crashes.length,
    crashesIncomplete: crashes.filter((c) => c.fullMs === undefined).length,
    firstSuspicionMs: percentiles(defined(crashes.map((c) => c.firstSuspectMs))),
    firstDeadMs: percentiles(defined(crashes.map((c) => c.firstDeadMs))),
    everyoneDeadMs: percentiles(defined(crashes.map((c) => c.fullMs))),
    perMemberDeadMs: percentiles(crashes.flatMap((c) => c.learnMs)),
    falseDeadViews: views, falseDeadDeclarations: declarations, falseDeadIncidents: incidents,
    falseDeadViewsPer100MemberHours: per100(views),
    falseDeadDeclarationsPer100MemberHours: per100(declarations),
    falseDeadIncidentsPer100MemberHours: per100(incidents),
    falseDeadIncidentsCi95: memberHours > 0 ? rateInterval(incidents, memberHours, 100)
      : { low: 0, high: Infinity },
    runsOverBound: runs.filter((r) => r.falseDead.incidents > r.falseDeadAllowed).length,
    falseDeadAllowed: sum((r) => r.falseDeadAllowed),
    partitionVerdicts: sum((r) => r.falseDead.partitionViews),
    messagesPerMemberPerS: memberSeconds > 0 ? sum((r) => r.messages) / memberSeconds : 0,
    bytesPerMemberPerS: memberSeconds > 0 ? sum((r) => r.bytes) / memberSeconds : 0,
    invalidMessages: sum((r) => r.invalidMessages),
    refutations: sum((r) => r.refutations),
    rejoins: sum((r) => r.rejoins),
    leaderAgreementMs,
  };
}

function summaryLines(s: LifeguardSummary): string[] {
  const agreement = LEADER_EVENTS.map(({ kind, label }) => {
    const a = s.leaderAgreementMs[kind];
    if (a === undefined) return `  ${label}: -`;
    const missed = a.missed > 0 ? `, NOT within the bound in ${a.missed}` : '';
    return `  ${label}: p50 ${seconds(a.settled.p50)}, p99 ${seconds(a.settled.p99)} `
      + `(first agreement p50 ${seconds(a.first.p50)}; ${a.settled.count} samples${missed})`;
  });
  return [
    `lifeguard ${s.lifeguard ? 'on' : 'off'}: ${formatNumber(s.memberHours, 2)} member-hours`,
    `  crashed member (${s.crashes} crashes, ${s.crashesIncomplete} restarted or ended before `
      + `everyone knew): first suspicion p50 ${seconds(s.firstSuspicionMs.p50)}, p99 `
      + `${seconds(s.firstSuspicionMs.p99)}; first 'dead' p50 ${seconds(s.firstDeadMs.p50)}, p99 `
      + `${seconds(s.firstDeadMs.p99)}; everyone holds it dead p50 `
      + `${seconds(s.everyoneDeadMs.p50)}, p99 ${seconds(s.everyoneDeadMs.p99)} (per member p50 `
      + `${seconds(s.perMemberDeadMs.p50)}, p99 ${seconds(s.perMemberDeadMs.p99)})`,
    "  false 'dead' per 100 member-hours: "
      + `${formatNumber(s.falseDeadDeclarationsPer100MemberHours)} declarations (own suspicion `
      + `timed out), ${formatNumber(s.falseDeadIncidentsPer100MemberHours)} lives wrongly ended, `
      + `${formatNumber(s.falseDeadViewsPer100MemberHours)} member views `
      + `(${s.falseDeadDeclarations} / ${s.falseDeadIncidents} / ${s.falseDeadViews}; `
      + `${s.refutations} refutations; ${s.partitionVerdicts} verdicts across the partition)`,
    `  lives wrongly ended: ${formatNumber(s.falseDeadIncidentsPer100MemberHours)} per 100 `
      + `member-hours, 95 % interval ${interval(s.falseDeadIncidentsCi95)}; false-dead bound: `
      + `${s.falseDeadIncidents} of ${s.falseDeadAllowed} allowed, over it on ${s.runsOverBound} `
      + `of the runs${s.lifeguard ? '' : ' (reported, not held: plain SWIM)'}`,
    `  load: ${formatNumber(s.messagesPerMemberPerS, 1)} messages and `
      + `${formatNumber(s.bytesPerMemberPerS, 0)} bytes per member per second; `
      + `${s.invalidMessages} invalid messages dropped; ${s.rejoins} rejoins after the heal`,
    '  every member names the same leader',
    ...agreement,
  ];
}

function comparisonLine(on: LifeguardSummary, off: LifeguardSummary): string {
  const ratio = (a: number, b: number): string =>
    `${a} vs ${b}` + (a > 0 && b > a ? `, ${formatNumber(b / a, 1)}× fewer with Lifeguard` : '');
  const offOverOn = rateRatioInterval(off.falseDeadIncidents, off.memberHours,
    on.falseDeadIncidents, on.memberHours);
  return `Lifeguard on vs off, same faults: false 'dead' declarations `
    + `${formatNumber(on.falseDeadDeclarationsPer100MemberHours)} vs `
    + `${formatNumber(off.falseDeadDeclarationsPer100MemberHours)} per 100 member-hours `
    + `(${ratio(on.falseDeadDeclarations, off.falseDeadDeclarations)}), lives wrongly ended `
    + `${formatNumber(on.falseDeadIncidentsPer100MemberHours)} vs `
    + `${formatNumber(off.falseDeadIncidentsPer100MemberHours)} `
    + `(${ratio(on.falseDeadIncidents, off.falseDeadIncidents)}; off/on 95 % interval `
    + `${interval(offOverOn)}); first 'dead' p50 `
    + `${seconds(on.firstDeadMs.p50)} vs ${seconds(off.firstDeadMs.p50)} (Lifeguard trades `
    + 'detection time for accuracy)';
}

function percentiles(values: readonly number[]): Percentiles {
  return { p50: quantile(values, 0.5), p99: quantile(values, 0.99), count: values.length };
}

function interval(i: Interval): string {
  const f = (x: number): string => (Number.isFinite(x) ? formatNumber(x, 2) : '∞');
  return `[${f(i.low)}, ${f(i.high)}]`;
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? '-' : `${(ms / 1000).toFixed(2)} s`;
}
