/**
 * The core scenario's report over all seeds: what the KV clients did and the linearizability
 * verdicts (ok, illegal, unknown — a failure — and too big for the checker, counted apart),
 * what the watchers saw and how often they resumed, the leases, snapshots and faults.
 */
import type { ScenarioOptions, SeedResult, SummaryReport } from '../../scenario.js';
import type { CoreFigures } from './core-scenario.js';
import { leaderlessLine } from '../lease/lease-world.js';

export function summarizeCore(results: readonly SeedResult<CoreFigures>[],
  _options: ScenarioOptions): SummaryReport {
  const sum = (f: (r: CoreFigures) => number): number =>
    results.reduce((s, r) => s + f(r.figures), 0);
  const verdicts = (v: string): number =>
    results.filter((r) => r.figures.linearizability === v).length;
  const data = {
    ok: sum((f) => f.kv.ok), failed: sum((f) => f.kv.failed), unknown: sum((f) => f.kv.unknown),
    puts: sum((f) => f.kv.puts), deletes: sum((f) => f.kv.deletes), cas: sum((f) => f.kv.cas),
    linearizableReads: sum((f) => f.kv.linearizableReads),
    serializableReads: sum((f) => f.kv.serializableReads),
    historiesOk: verdicts('ok'), illegal: verdicts('illegal'), unknownChecks: verdicts('unknown'),
    tooBigChecks: verdicts('too-big'), skipped: verdicts('skipped'),
    watchEvents: sum((f) => f.watches.events), watchResumes: sum((f) => f.watches.resumes),
    watchReconnects: sum((f) => f.watches.reconnects),
    watchersCompared: sum((f) => f.watches.compared),
    watchersCompacted: sum((f) => f.watches.compacted),
    leasesGranted: sum((f) => f.leases.granted), leasesEnded: sum((f) => f.leases.ended),
    snapshotsTaken: sum((f) => f.snapshots.taken),
    snapshotsInstalled: sum((f) => f.snapshots.installed),
    leaderChanges: sum((f) => f.leaderChanges), crashes: sum((f) => f.crashes),
    partitions: sum((f) => f.partitions), staleLeaders: sum((f) => f.staleLeaders),
    pauses: sum((f) => f.pauses),
    noLeaderAnswers: sum((f) => f.leaderless.noLeader),
    noQuorumAnswers: sum((f) => f.leaderless.noQuorum),
  };
  const lines = [
    `kv calls: ${data.ok} ok, ${data.failed} failed, ${data.unknown} unknown (${data.puts} puts, `
      + `${data.deletes} deletes, ${data.cas} cas, ${data.linearizableReads} linearizable `
      + `reads); ${data.serializableReads} serializable reads (not in the history: checked to `
      + 'read only values some write may have put)',
    `linearizability (WGL): ${data.historiesOk} histories ok, ${data.illegal} illegal, `
      + `${data.unknownChecks} unknown (budget ran out: failed), ${data.tooBigChecks} too big `
      + `for the checker (not checked), ${data.skipped} skipped (another checker failed)`,
    `watches: ${data.watchEvents} events, ${data.watchResumes} resumes, ${data.watchReconnects} `
      + `reconnects after an error; ${data.watchersCompared} watchers compared with the store `
      + `event for event, ${data.watchersCompacted} not (history compacted)`,
    `leases: ${data.leasesGranted} granted, ${data.leasesEnded} ended; snapshots: `
      + `${data.snapshotsTaken} taken, ${data.snapshotsInstalled} installed from a leader`,
    `faults: ${data.crashes} crashes, ${data.partitions} partitions (${data.staleLeaders} of `
      + `them stale-leader), ${data.pauses} pauses; `
      + `${data.leaderChanges} leader changes`,
    leaderlessLine(data.noLeaderAnswers, data.noQuorumAnswers),
  ];
  return { lines, data, violations: [] };
}
