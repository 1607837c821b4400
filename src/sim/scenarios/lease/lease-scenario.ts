/**
 * Scenario `lease`: 3–7 consistent-core members (the real ConsistentCore, as the server runs
 * it) on simulated hosts, disks and network, under the full nemesis (crash and restart with
 * unsynced data lost or torn, pauses, partitions of every shape, loss bursts, latency spikes,
 * member clock drift within ρ) and leadership transfers, serving simulated clients that grant
 * leases, attach keys, keep them alive at TTL/3 on their own drifting clocks, then abandon or
 * revoke them. The checkers (lease-checker.ts) hold every lease's end to docs/leases.md's
 * bounds in real time; at the end every member must hold the same state.
 *
 * Phases: faults for `--safety-s`; then the heal (every member up, links whole), every client
 * ends its lease, and the run goes on until the last lease's upper bound has passed, plus 2 s
 * for the replicas to settle and be compared.
 */
import { crc32c } from '../../../core/checksum.js';
import type { NodeId } from '../../../core/ids.js';
import { encodeKvSnapshot } from '../../../core/kv/index.js';
import { Nemesis } from '../../nemesis.js';
import { Prng } from '../../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, Violation } from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import { TraceHash } from '../../trace-hash.js';
import { LeaseChecker, type LeaseCounts, type LeaseSlack } from './lease-checker.js';
import { drawLeaseSettings, LEASE_FLAGS, type LeaseSettings } from './lease-settings.js';
import { summarizeLease } from './lease-summary.js';
import { LeaseWorkload, type WorkloadCounts } from './lease-workload.js';
import { LeaseWorld, type WorldCounts } from './lease-world.js';

export interface LeaseFigures {
  readonly leases: LeaseCounts;
  readonly workload: WorkloadCounts;
  readonly slack: LeaseSlack;
  readonly leaderChanges: number;
  readonly transfers: number;
  readonly crashes: number;
  readonly partitions: number;
  readonly pauses: number;
}

export const leaseScenario: Scenario<LeaseFigures> = {
  name: 'lease',
  summary: 'leases on the consistent core under the full nemesis and leadership transfers: '
    + 'never ended early, gone soon after the last keep-alive, replicas agree',
  flags: LEASE_FLAGS,
  runSeed: (seed, options) => runLeaseSeed(seed, options),
  summarize: summarizeLease,
};

/** Hooks for tests: look at the world at the end of the run. */
export interface LeaseSeedHooks {
  readonly atEnd?: (world: LeaseWorld) => void;
}

/** How often the upper bounds are checked. Unit: ms (virtual). */
const SWEEP_INTERVAL_MS = 20;
/** The holder's margin (the client library's default leaseMarginMs). Unit: ms. */
const HOLDER_MARGIN_MS = 100;
/** After the end, how long replicas get to reach the same applied index. Unit: ms. */
const SETTLE_MS_MAX = 3_000;

export function runLeaseSeed(seed: number, options: ScenarioOptions,
  hooks: LeaseSeedHooks = {}): SeedResult<LeaseFigures> {
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const trace = new TraceHash();
  const settings = drawLeaseSettings(prng, options);
  let quietSinceMs = (): number => -Infinity;
  const checker = new LeaseChecker(() => scheduler.nowMs, settings.timing, () => quietSinceMs());
  const world = new LeaseWorld(prng.fork(), scheduler, trace, settings, checker);
  const nemesis = new Nemesis(prng.fork(), scheduler, world.nemesisTarget(), settings.plan,
    settings.safetyMs);
  quietSinceMs = () => Math.max(...world.ids.map((id) => nemesis.quietSinceMs(world.ids[0]!, id)));
  const workload = new LeaseWorkload(prng.fork(), world.clients, checker, {
    ttlMsMin: settings.ttlMsMin, ttlMsMax: settings.ttlMsMax,
    clockRateErrorMax: settings.tuning.clockRateErrorMax, marginMs: HOLDER_MARGIN_MS,
    thinkMsMean: 200, revokeRate: 0.4,
  });
  const violations: Violation[] = [];
  const broken = (): boolean => checker.violations.length > 0 || world.violations.length > 0;
  try {
    play(world, nemesis, workload, checker, quietSinceMs, broken);
    if (!broken()) violations.push(...convergence(world));
  } catch (error) {
    // An assertion inside the real code (core invariants, runtime order) is a failed seed.
    violations.push({ checker: 'assertion', atMs: scheduler.nowMs, message: String(error) });
  }
  hooks.atEnd?.(world);
  violations.unshift(...world.violations, ...checker.violations);
  return {
    seed, traceHash: trace.digest(), violations,
    figures: figuresOf(checker, workload, world.counts, nemesis),
    simulatedMs: scheduler.nowMs, events: scheduler.eventsRun,
    drawn: drawnOf(settings),
  };
}

/** The run's phases; stops early at the first violation. */
function play(world: LeaseWorld, nemesis: Nemesis, workload: LeaseWorkload,
  checker: LeaseChecker, quietSinceMs: () => number, broken: () => boolean): void {
  const { scheduler, settings } = world;
  const sweep = (): void => {
    checker.sweep();
    scheduler.schedule(SWEEP_INTERVAL_MS, sweep);
  };
  nemesis.start();
  if (settings.transferIntervalMsMean !== undefined) {
    // Transfers go on after the heal, so stale TTLs at elections show; they stop before the end.
    world.startTransfers(settings.transferIntervalMsMean, settings.endMs - 1_500);
  }
  workload.start();
  sweep();
  if (scheduler.runUntil(settings.safetyMs, broken)) return;
  world.healAll();
  checker.healed(Math.max(0, Math.min(settings.safetyMs, quietSinceMs())));
  workload.stopAll();
  if (scheduler.runUntil(settings.endMs, broken)) return;
  checker.sweep();
}

/** After the end: every member reaches the same applied state (same bytes), within a bound. */
function convergence(world: LeaseWorld): Violation[] {
  const { scheduler } = world;
  const endMs = scheduler.nowMs;
  const settled = (): boolean => {
    const statuses = [...world.hosts.values()].map((host) => host.process?.core.status());
    const first = statuses[0];
    return first !== undefined && first.commitIndex === first.lastIndex
      && statuses.every((s) => s !== undefined && s.lastIndex === first.lastIndex
        && s.appliedIndex === first.lastIndex);
  };
  scheduler.runUntil(endMs + SETTLE_MS_MAX, settled);
  const digests = new Map<string, NodeId[]>();
  for (const [id, host] of world.hosts) {
    const core = host.process?.core;
    const digest = core === undefined ? 'down' : `${core.status().appliedIndex}:`
      + snapshotDigest(encodeKvSnapshot(core.store.toSnapshot()));
    digests.set(digest, [...(digests.get(digest) ?? []), id]);
  }
  if (digests.size === 1) return [];
  const views = [...digests].map(([digest, ids]) => `${ids.join(',')}=${digest}`).join(' ');
  return [{ checker: 'replicas-agree', atMs: scheduler.nowMs,
    message: `members differ ${scheduler.nowMs - endMs} ms after the end: ${views}` }];
}

function figuresOf(checker: LeaseChecker, workload: LeaseWorkload, world: WorldCounts,
  nemesis: Nemesis): LeaseFigures {
  return {
    leases: { ...checker.counts }, workload: { ...workload.counts }, slack: checker.slacks(),
    leaderChanges: world.leaderChanges, transfers: world.transfers,
    crashes: nemesis.counts.crashes, partitions: nemesis.counts.partitions,
    pauses: nemesis.counts.pauses,
  };
}

function drawnOf(settings: LeaseSettings): Readonly<Record<string, unknown>> {
  return {
    ...settings.plan, network: settings.network, mutant: settings.mutant ?? 'none',
    electionTimeoutMsMax: settings.tuning.electionTimeoutMsMax,
    checkpointIntervalMs: settings.lease.checkpointIntervalMs,
    leasesPerEntryMax: settings.lease.leasesPerEntryMax,
    ttlMs: [settings.ttlMsMin, settings.ttlMsMax],
    transferIntervalMsMean: settings.transferIntervalMsMean ?? 'none',
    clientDriftRates: settings.clientDriftRates,
  };
}

/** CRC-32C and length of a store's snapshot bytes: equal states, equal digests. */
function snapshotDigest(bytes: Uint8Array): string {
  return `${bytes.length}/${crc32c(bytes).toString(16)}`;
}
