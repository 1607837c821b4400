/**
 * The lease scenario's report over all seeds: what the clients did, how leases ended, the
 * smallest slack to each bound (how close the real code came to breaking it), and the faults.
 */
import type { ScenarioOptions, SeedResult, SummaryReport } from '../../scenario.js';
import { formatMs } from '../../stats.js';
import type { LeaseFigures } from './lease-scenario.js';

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
  ];
  return { lines, data, violations: [] };
}
