/**
 * Scenario `core`: the real ConsistentCore on every simulated member (5 by default) with
 * snapshots on (a snapshot every few dozen entries, InstallSnapshot in small chunks), under the
 * lease scenario's full nemesis (crashes with unsynced writes lost or torn, pauses, partitions,
 * loss, drift within ρ), leadership transfers and stale-leader faults (Nemesis.startStaleLeaders:
 * a leader hands over and at once hears no member, while the readers reach it only), serving
 * the shipped client (ConclaveClient over SimClientTransport, on the lease scenario's world:
 * lease-world.ts) in four roles:
 * - KV clients (kv-workload.ts): puts, deletes, compare-and-swaps (txns), linearizable and
 *   serializable gets on a few keys; their history goes to the WGL checker (kv-model.ts);
 * - readers (kv-workload.ts): linearizable gets only, into the same history;
 * - lease clients (the lease scenario's LeaseWorkload): leases held to docs/leases.md's bounds
 *   by the LeaseChecker, fencing included (a lease's keys go with it);
 * - watchers (watch-checker.ts): every revision of the KV keys, in order, exactly once, across
 *   reconnects and resumes.
 * At the end every member holds the same state (the lease scenario's `convergence`).
 *
 * Phases: faults for `--safety-s`; the heal; the KV clients stop, every lease is let go, the
 * run goes on until the last lease's bound has passed; then replicas settle and are compared,
 * the watchers catch up and are compared with the store, and the history is checked. A
 * linearizability verdict of `unknown` fails the seed unless its partitions are too big for
 * the checker (history-verdict.ts), and the summary counts those.
 */
import { Nemesis } from '../../nemesis.js';
import { Prng } from '../../prng.js';
import { checkLinearizable } from '../../checkers/linearizability.js';
import { judgeHistory, type HistoryVerdict } from '../../checkers/history-verdict.js';
import { kvModel } from '../../checkers/kv-model.js';
import type { Scenario, ScenarioOptions, SeedResult, Violation } from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import type { SimRecorder } from '../../sim-recorder.js';
import { SettleGate } from '../../settle.js';
import { TraceHash } from '../../trace-hash.js';
import { convergence } from '../lease/lease-scenario.js';
import { LeaseChecker, type LeaseCounts } from '../lease/lease-checker.js';
import { LeaseWorkload, type WorkloadCounts } from '../lease/lease-workload.js';
import {
  leaderlessCounts, LeaseWorld, type LeaderlessCounts,
} from '../lease/lease-world.js';
import type { SnapshotCounts } from '../lease/snapshot-checker.js';
import {
  CORE_FLAGS, CORE_MUTANT_CATCHES, drawCoreSettings, KV_PREFIX, type CoreSettings,
} from './core-settings.js';
import { summarizeCore } from './core-summary.js';
import { KvWorkload, type KvWorkloadCounts } from './kv-workload.js';
import { WatchChecker, type WatchCounts } from './watch-checker.js';

export interface CoreFigures {
  readonly kv: KvWorkloadCounts;
  /** Operations in the history the WGL checker searched. */
  readonly operations: number;
  readonly linearizability: HistoryVerdict | 'skipped';
  readonly watches: WatchCounts;
  readonly leases: LeaseCounts;
  readonly leaseWorkload: WorkloadCounts;
  readonly snapshots: SnapshotCounts;
  readonly leaderChanges: number;
  /** Leader-only calls a member refused knowing no leader, by verdict (leaderless.ts). */
  readonly leaderless: LeaderlessCounts;
  readonly crashes: number;
  readonly partitions: number;
  /** Stale-leader faults (counted in `partitions` too; nemesis.ts). */
  readonly staleLeaders: number;
  readonly pauses: number;
}

export const coreScenario: Scenario<CoreFigures> = {
  name: 'core',
  summary: 'the real ConsistentCore with snapshots under the full nemesis, serving the shipped '
    + 'client: KV history linearizable (WGL), watches complete and in order, lease bounds; '
    + 'replicas agree',
  flags: CORE_FLAGS,
  mutantCatches: CORE_MUTANT_CATCHES,
  runSeed: (seed, options, _progress, recorder) => runCoreSeed(seed, options, recorder),
  records: true,
  summarize: summarizeCore,
};

/** Events a seed may run at most: a run past it is a runaway (a bug), reported as one. */
const EVENTS_MAX = 20_000_000;
/** How often the lease upper bounds are checked. Unit: ms (virtual). */
const SWEEP_INTERVAL_MS = 20;
/** After convergence, how long the watchers get to catch up. Unit: ms (virtual). */
const WATCH_CATCH_UP_MS = 3_000;
/** A stale-leader fault lasts up to this many (longest) election timeouts. Unit: ratio. */
const STALE_LEADER_ELECTION_TIMEOUTS = 3;
/** The WGL search's budget (as the raft scenario's). Unit: steps. */
const STEP_BUDGET = 2_000_000;

interface Run {
  readonly settings: CoreSettings;
  readonly world: LeaseWorld;
  readonly nemesis: Nemesis;
  readonly checker: LeaseChecker;
  readonly leases: LeaseWorkload;
  readonly kv: KvWorkload;
  readonly watches: WatchChecker;
  /** The stale-leader faults' draws (apart from the fault schedule's). */
  readonly staleLeaderPrng: Prng;
  readonly quietSinceMs: () => number;
  readonly violations: () => Violation[];
}

export async function runCoreSeed(seed: number, options: ScenarioOptions,
  recorder?: SimRecorder): Promise<SeedResult<CoreFigures>> {
  const prng = new Prng(seed);
  const scheduler = new Scheduler(recorder);
  const trace = new TraceHash();
  const run = assemble(prng, scheduler, trace, drawCoreSettings(prng, options));
  const { world } = run;
  const violations: Violation[] = [];
  let linearizability: HistoryVerdict | 'skipped' = 'skipped';
  try {
    await play(run);
    if (run.violations().length === 0) violations.push(...await convergence(world));
    if (run.violations().length === 0 && violations.length === 0) await compareWatches(run);
    if (run.violations().length === 0 && violations.length === 0) {
      linearizability = checkHistory(run, violations);
      violations.push(...run.kv.checkSerializable());
    }
  } catch (error) {
    violations.push({ checker: 'assertion', atMs: scheduler.nowMs, message: String(error) });
  } finally {
    run.watches.stop();
    run.kv.stop();
    world.closeClients();
    await world.gate.settleIfMarked();
  }
  violations.unshift(...run.violations());
  return { seed, traceHash: trace.digest(), violations,
    figures: figuresOf(run, linearizability), simulatedMs: scheduler.nowMs,
    events: scheduler.eventsRun, drawn: drawnOf(run.settings) };
}

function assemble(prng: Prng, scheduler: Scheduler, trace: TraceHash, settings: CoreSettings):
  Run {
  const s = settings.lease;
  let quietSinceMs = (): number => -Infinity;
  const checker = new LeaseChecker(() => scheduler.nowMs, s.timing, () => quietSinceMs());
  const world = new LeaseWorld(prng.fork(), scheduler, trace, s, checker,
    new SettleGate(scheduler));
  const nemesis = new Nemesis(prng.fork(), scheduler, world.nemesisTarget(), s.plan,
    s.safetyMs);
  quietSinceMs = () => Math.max(...world.ids.map((id) => nemesis.quietSinceMs(world.ids[0]!, id)));
  const { kvClients, readers, leaseClients } = settings;
  const clients = world.clients;
  const nowMs = (): number => scheduler.nowMs;
  const readerClients = clients.slice(kvClients, kvClients + readers);
  world.staleLeaderPinned = readerClients.map((c) => c.id);
  const kv = new KvWorkload(prng.fork(), clients.slice(0, kvClients), settings.keys, nowMs,
    readerClients);
  const others = kvClients + readers;
  const leases = new LeaseWorkload(prng.fork(),
    clients.slice(others, others + leaseClients), checker,
    { ttlMsMin: s.ttlMsMin, ttlMsMax: s.ttlMsMax, thinkMsMean: 200, revokeRate: 0.4 });
  const watches = new WatchChecker(prng.fork(), clients.slice(others + leaseClients),
    KV_PREFIX, nowMs);
  const violations = (): Violation[] => {
    const flagged = world.violations.some((v) => v.checker === 'runaway');
    if (scheduler.eventsRun >= EVENTS_MAX && !flagged) {
      world.violations.push({ checker: 'runaway', atMs: scheduler.nowMs,
        message: `more than ${EVENTS_MAX} events: something loops without end` });
    }
    return [...world.violations, ...checker.violations, ...watches.violations];
  };
  return { settings, world, nemesis, checker, leases, kv, watches,
    staleLeaderPrng: prng.fork(), quietSinceMs: () => quietSinceMs(), violations };
}

/** The run's phases; stops early at the first violation. */
async function play(run: Run): Promise<void> {
  const { world, nemesis, leases, kv, watches, checker } = run;
  const { scheduler, settings, gate } = world;
  const broken = (): boolean => run.violations().length > 0;
  const sweep = (): void => {
    checker.sweep();
    scheduler.schedule(SWEEP_INTERVAL_MS, sweep);
  };
  nemesis.start();
  nemesis.startStaleLeaders(run.settings.staleLeaderIntervalMsMean,
    STALE_LEADER_ELECTION_TIMEOUTS * settings.tuning.electionTimeoutMsMax, run.staleLeaderPrng);
  if (settings.transferIntervalMsMean !== undefined) {
    world.startTransfers(settings.transferIntervalMsMean, settings.endMs - 1_500);
  }
  leases.start();
  kv.start();
  watches.start();
  sweep();
  if (await gate.runUntil(settings.safetyMs, broken)) return;
  world.healAll();
  checker.healed(Math.max(0, Math.min(settings.safetyMs, run.quietSinceMs())));
  leases.stopAll();
  kv.stop();
  if (await gate.runUntil(settings.endMs, broken)) return;
  checker.sweep();
}

/** The watchers catch up with the converged store, then are compared with its history. */
async function compareWatches(run: Run): Promise<void> {
  const { world, watches } = run;
  const core = [...world.hosts.values()][0]?.process?.core;
  if (core === undefined) return;
  const target = watches.lastRevision(core);
  await world.gate.runUntil(world.scheduler.nowMs + WATCH_CATCH_UP_MS,
    () => watches.caughtUp(target));
  watches.compare(core);
}

/** `unknown` fails the seed too, unless the history is too big for the checker. */
function checkHistory(run: Run, violations: Violation[]): HistoryVerdict {
  const result = checkLinearizable(kvModel, run.kv.history.operations(),
    { stepBudget: STEP_BUDGET });
  const judged = judgeHistory(result, run.world.scheduler.nowMs);
  if (judged.violation !== undefined) violations.push(judged.violation);
  return judged.verdict;
}

function figuresOf(run: Run, linearizability: HistoryVerdict | 'skipped'): CoreFigures {
  const { world, nemesis } = run;
  return {
    kv: { ...run.kv.counts }, operations: run.kv.history.operations().length, linearizability,
    watches: { ...run.watches.counts }, leases: { ...run.checker.counts },
    leaseWorkload: { ...run.leases.counts }, snapshots: { ...world.snapshots.counts },
    leaderChanges: world.counts.leaderChanges, leaderless: leaderlessCounts(world.counts),
    crashes: nemesis.counts.crashes,
    partitions: nemesis.counts.partitions, staleLeaders: nemesis.counts.staleLeaders,
    pauses: nemesis.counts.pauses,
  };
}

function drawnOf(settings: CoreSettings): Readonly<Record<string, unknown>> {
  const s = settings.lease;
  return {
    ...s.plan, network: s.network, mutant: settings.mutant ?? 'none',
    electionTimeoutMsMax: s.tuning.electionTimeoutMsMax, snapshots: s.snapshots,
    kvClients: settings.kvClients, readers: settings.readers, leaseClients: settings.leaseClients,
    watchers: settings.watchers, transferIntervalMsMean: s.transferIntervalMsMean ?? 'none',
    staleLeaderIntervalMsMean: settings.staleLeaderIntervalMsMean,
  };
}
