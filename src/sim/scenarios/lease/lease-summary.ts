/**
 * The lease scenario's report over all seeds: what the clients did, how leases ended, the
 * smallest slack to each bound (how close the real code came to breaking it), the elections
 * and locks (handovers checked, overlaps, what the fence refused and accepted), and the faults.
 */
import type {
  ScenarioOptions, SeedResult, SummaryReport, Violation,
} from '../../scenario.js';
import { formatMs } from '../../stats.js';
import type { LeaseFigures } from './lease-scenario.js';
import { leaderlessLine } from './lease-world.js';

/**
 * Under `--timing-violated`, this many seeds without a single overlap mean the violations did
 * not bite (a broken workload or checker): a failure. Why 20: overlaps showed in most seeds.
 */
const VIOLATED_SEEDS_WITHOUT_OVERLAP_MAX = 20;

export function summarizeLease(results: readonly SeedResult<LeaseFigures>[],
  _options: ScenarioOptions): SummaryReport {
  const sum = (f: (r: LeaseFigures) => number): number =>
    results.reduce((s, r) => s + f(r.figures), 0);
  const min = (f: (r: LeaseFigures) => number | undefined): number | undefined => {
    const values = results.map((r) => f(r.figures)).filter((v): v is number => v !== undefined);
    return values.length === 0 ? undefined : Math.min(...values);
  };
  const checked = (f: (r: LeaseFigures) => number): string => `${sum(f)} checked`;
  const data = {
    leasesGranted: sum((f) => f.leases.granted), leasesEnded: sum((f) => f.leases.ended),
    leasesRevoked: sum((f) => f.leases.revoked),
    keepAlivesAcked: sum((f) => f.leases.keepAlivesAcked),
    grantsUnknown: sum((f) => f.workload.grantsUnknown), holdersLost: sum((f) => f.workload.lost),
    neverEarlierSlackMsMin: min((f) => f.slack.neverEarlierMsMin),
    holderSlackMsMin: min((f) => f.slack.holderMsMin),
    upperQuietSlackMsMin: min((f) => f.slack.upperQuietMsMin),
    upperHealSlackMsMin: min((f) => f.slack.upperHealMsMin),
    leaderChanges: sum((f) => f.leaderChanges), transfers: sum((f) => f.transfers),
    crashes: sum((f) => f.crashes), partitions: sum((f) => f.partitions),
    pauses: sum((f) => f.pauses),
    noLeaderAnswers: sum((f) => f.leaderless.noLeader),
    noQuorumAnswers: sum((f) => f.leaderless.noQuorum),
    snapshots: { taken: sum((f) => f.snapshots.taken),
      installed: sum((f) => f.snapshots.installed), compared: sum((f) => f.snapshots.compared) },
  };
  const lines = [
    `leases: ${data.leasesGranted} granted, ${data.leasesEnded} ended (${data.leasesRevoked} by `
      + `their holder's revoke, the rest expired); ${data.keepAlivesAcked} keep-alives `
      + `acknowledged; ${data.grantsUnknown} grants unknown to their client; `
      + `${data.holdersLost} holders lost their lease while keeping it alive`,
    `never earlier than TTL/(1+ρ) after the acknowledged keep-alive: min slack `
      + `${formatMs(data.neverEarlierSlackMsMin)} (${checked((f) => f.slack.neverEarlierChecked)})`,
    `holder's local deadline passed before the end: min slack ${formatMs(data.holderSlackMsMin)} `
      + `on the holder's clock (${checked((f) => f.slack.holderChecked)})`,
    `gone within (TTL + checkpoint + 2 × election timeout)/(1−ρ) + allowance: min slack `
      + `${formatMs(data.upperQuietSlackMsMin)} in fault-free windows `
      + `(${checked((f) => f.slack.upperQuietChecked)}), ${formatMs(data.upperHealSlackMsMin)} `
      + `counted from the heal (${checked((f) => f.slack.upperHealChecked)})`,
    `leader changes: ${data.leaderChanges} (${data.transfers} transfers asked); faults: `
      + `${data.crashes} crashes, ${data.partitions} partitions, ${data.pauses} pauses`,
    leaderlessLine(data.noLeaderAnswers, data.noQuorumAnswers),
    ...(sum((f) => f.snapshots.taken) === 0 ? [] : [`snapshots: ${sum((f) => f.snapshots.taken)} `
      + `taken, ${sum((f) => f.snapshots.installed)} installed from a leader, `
      + `${sum((f) => f.snapshots.compared)} compared byte for byte with another at the same `
      + 'index']),
  ];
  const recipes = summarizeRecipes(results);
  return { lines: [...lines, ...recipes.lines], data: { ...data, recipes: recipes.data },
    violations: recipes.violations };
}

function grew(results: readonly SeedResult<LeaseFigures>[]): string {
  const broken = results.flatMap((r) => r.violations)
    .filter((v) => v.checker === 'fencing-token' || v.checker === 'term').length;
  return broken === 0 ? 'tokens and terms grew every time'
    : `a token or term failed to grow ${broken} times`;
}

function summarizeRecipes(results: readonly SeedResult<LeaseFigures>[]):
  { lines: string[]; data: Record<string, unknown>; violations: Violation[] } {
  const sum = (f: (r: LeaseFigures['recipes']) => number): number =>
    results.reduce((s, r) => s + f(r.figures.recipes), 0);
  const violated = results.some((r) => r.figures.recipes.timingViolated);
  const data = {
    timingViolated: violated,
    campaigns: sum((f) => f.workload.campaigns), leaderships: sum((f) => f.checks.leaderships),
    handoversChecked: sum((f) => f.checks.handovers), overlaps: sum((f) => f.checks.overlaps),
    seedsWithOverlap: results.filter((r) => r.figures.recipes.checks.overlaps > 0).length,
    overlapMsMax: Math.max(0, ...results.map((r) => r.figures.recipes.checks.overlapMsMax)),
    writesAccepted: sum((f) => f.checks.writesAccepted),
    staleWritesRefused: sum((f) => f.checks.staleRefused),
    staleWritesAccepted: sum((f) => f.checks.staleAccepted),
    supersededAccepted: sum((f) => f.checks.supersededAccepted),
    released: sum((f) => f.workload.holdingEnds.released),
    leaseEnded: sum((f) => f.workload.holdingEnds['lease-ended']),
    stalled: sum((f) => f.workload.holdingEnds.stalled),
    keyDeleted: sum((f) => f.workload.holdingEnds['key-deleted']),
    campaignsLost: sum((f) => f.workload.campaigns - f.workload.elected),
    stallEnds: sum((f) => f.workload.ends.stalled),
    clientFreezes: sum((f) => f.clientPauses), clientCuts: sum((f) => f.clientCuts),
    heldChecks: sum((f) => f.held.checks), heldRefused: sum((f) => f.held.refused),
    announced: sum((f) => f.held.announced),
    unlocksAfterLoss: sum((f) => f.held.unlocksAfterLoss),
  };
  const overlaps = violated
    ? `${data.overlaps} overlaps seen (expected: --timing-violated; in ${data.seedsWithOverlap} `
      + `of ${results.length} seeds, longest ${formatMs(data.overlapMsMax)})`
    : `${data.overlaps} overlaps`;
  const lines = [
    `elections and locks: ${data.campaigns} campaigns, ${data.leaderships} leaderships; `
      + `holdings ended: ${data.released} released, ${data.leaseEnded} lease ended, `
      + `${data.stalled} stalled, ${data.keyDeleted} key deleted; ${data.stallEnds} campaigns `
      + `or holdings ended by a stall; client freezes ${data.clientFreezes}, network cuts `
      + `${data.clientCuts}`,
    `handovers checked: ${data.handoversChecked} (${grew(results)}), `
      + `${overlaps}; stale writes refused: ${data.staleWritesRefused}, stale writes `
      + `accepted: ${data.staleWritesAccepted} (${data.writesAccepted} writes accepted, `
      + `${data.supersededAccepted} of them from a replaced holder before its successor wrote)`,
    `held() before each write: ${data.heldChecks} checks, ${data.heldRefused} said false (no `
      + `write sent); ${data.announced} tokens announced before a first write; `
      + `${data.unlocksAfterLoss} unlocks after a loss, each settled at once`,
  ];
  const violations: Violation[] = [];
  if (violated && data.overlaps === 0 && results.length >= VIOLATED_SEEDS_WITHOUT_OVERLAP_MAX) {
    violations.push({ checker: 'timing-violated-bites', atMs: 0, message: `no overlap in `
      + `${results.length} seeds with holders frozen past their TTL: the workload or the `
      + 'overlap checker is broken' });
  }
  return { lines, data, violations };
}
