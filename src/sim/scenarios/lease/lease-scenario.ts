/**
 * Scenario `lease`: 3–7 consistent-core members (the real ConsistentCore, as the server runs
 * it) on simulated hosts, disks and network, under the full nemesis (crash and restart with
 * unsynced data lost or torn, pauses, partitions of every shape, loss bursts, latency spikes,
 * member clock drift within ρ) and leadership transfers, serving two kinds of simulated
 * clients — the shipped client (ConclaveClient over SimClientTransport), each on its own
 * drifting clock:
 * - lease clients grant leases (the client's Lease: keep-alives at TTL/3 over the lease stream,
 *   its local deadline), attach keys, then abandon or revoke them; the checkers
 *   (lease-checker.ts) hold every lease's end to docs/leases.md's bounds in real time;
 * - election and lock clients campaign with the client's elections and locks (the Campaign
 *   driven by src/client/recipe-driver.ts), hold, write to a fenced resource, resign, unlock or
 *   abandon, on machines that freeze and lose the network; the checkers (recipe-checker.ts)
 *   find any two holders believing at the same real instant, tokens or terms that fail to
 *   grow, and stale writes the fence accepted. Their leases are held to the same bounds.
 * At the end every member must hold the same state.
 *
 * Phases: faults for `--safety-s`; then the heal (every member and client up, links whole),
 * every client lets go of its lease, and the run goes on until the last lease's upper bound has
 * passed, plus 2 s for the replicas to settle and be compared.
 *
 * `--timing-violated`: election and lock clients freeze for longer than their TTL (some right
 * between checking their leadership and writing). Overlaps then must happen and are counted,
 * not failures; every other checker still holds, the fence included.
 */
import { crc32c } from '../../../core/checksum.js';
import type { NodeId } from '../../../core/ids.js';
import { encodeKvSnapshot } from '../../../core/kv/index.js';
import { Nemesis } from '../../nemesis.js';
import { Prng } from '../../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, Violation } from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import type { SimRecorder } from '../../sim-recorder.js';
import { SettleGate } from '../../settle.js';
import { TraceHash } from '../../trace-hash.js';
import { ClientFaults } from './client-faults.js';
import { FencedResources } from './fenced-resource.js';
import { HeldChecker, type HeldCounts } from './held-checker.js';
import { LeaseChecker, type LeaseCounts, type LeaseSlack } from './lease-checker.js';
import {
  drawLeaseSettings, LEASE_FLAGS, LEASE_MUTANT_CATCHES, type LeaseSettings,
} from './lease-settings.js';
import { summarizeLease } from './lease-summary.js';
import { LeaseWorkload, type WorkloadCounts } from './lease-workload.js';
import {
  leaderlessCounts, LeaseWorld, type LeaderlessCounts,
} from './lease-world.js';
import { RecipeChecker, type RecipeCounts } from './recipe-checker.js';
import { RecipeWorkload, type RecipeWorkloadCounts } from './recipe-workload.js';
import type { SnapshotCounts } from './snapshot-checker.js';

export interface LeaseFigures {
  readonly leases: LeaseCounts;
  readonly workload: WorkloadCounts;
  readonly slack: LeaseSlack;
  readonly leaderChanges: number;
  readonly transfers: number;
  /** Leader-only calls a member refused knowing no leader, by verdict (leaderless.ts). */
  readonly leaderless: LeaderlessCounts;
  readonly crashes: number;
  readonly partitions: number;
  readonly pauses: number;
  readonly recipes: RecipeFigures;
  /** Snapshots taken, installed, and compared at an index (with `--snapshots`). */
  readonly snapshots: SnapshotCounts;
}

/** What the election and lock clients did and what the checkers saw. */
export interface RecipeFigures {
  readonly timingViolated: boolean;
  readonly checks: RecipeCounts;
  /** The holding checks (held-checker.ts). */
  readonly held: HeldCounts;
  readonly workload: RecipeWorkloadCounts;
  readonly clientPauses: number;
  /** Unit: ms (real). */
  readonly clientPausedMs: number;
  readonly clientCuts: number;
}

export const leaseScenario: Scenario<LeaseFigures> = {
  name: 'lease',
  summary: 'leases, elections and locks on the consistent core under the full nemesis and '
    + 'leadership transfers: leases never ended early and gone soon after the last keep-alive; '
    + 'no two holders at once, tokens and terms grow, the fence accepts no stale write; '
    + 'replicas agree',
  flags: LEASE_FLAGS,
  mutantCatches: LEASE_MUTANT_CATCHES,
  runSeed: (seed, options, _progress, recorder) => runLeaseSeed(seed, options, {}, recorder),
  records: true,
  summarize: summarizeLease,
};

/** Hooks for tests: look at the world at the end of the run. */
export interface LeaseSeedHooks {
  readonly atEnd?: (world: LeaseWorld) => void;
}

/** Events a seed may run at most: a run past it is a runaway (a bug), reported as one. */
const EVENTS_MAX = 20_000_000;

/** Everything that runs in one seed. */
interface Run {
  readonly world: LeaseWorld;
  readonly nemesis: Nemesis;
  readonly workload: LeaseWorkload;
  readonly recipes: RecipeWorkload;
  readonly clientFaults: ClientFaults;
  readonly checker: LeaseChecker;
  readonly recipeChecker: RecipeChecker;
  readonly heldChecker: HeldChecker;
  readonly quietSinceMs: () => number;
  readonly broken: () => boolean;
}

/** How often the upper bounds are checked. Unit: ms (virtual). */
const SWEEP_INTERVAL_MS = 20;
/** After the end, how long replicas get to reach the same applied index. Unit: ms. */
const SETTLE_MS_MAX = 3_000;

export async function runLeaseSeed(seed: number, options: ScenarioOptions,
  hooks: LeaseSeedHooks = {}, recorder?: SimRecorder): Promise<SeedResult<LeaseFigures>> {
  const prng = new Prng(seed);
  const scheduler = new Scheduler(recorder);
  const trace = new TraceHash();
  const settings = drawLeaseSettings(prng, options);
  const run = assemble(prng, scheduler, trace, settings);
  const { world, checker, recipeChecker, heldChecker } = run;
  const violations: Violation[] = [];
  try {
    await play(run);
    if (!run.broken()) violations.push(...await convergence(world));
  } catch (error) {
    // An assertion inside the real code (core invariants, runtime order) is a failed seed.
    violations.push({ checker: 'assertion', atMs: scheduler.nowMs, message: String(error) });
  } finally {
    // The clients stop (their calls and watches end) and what that starts runs out here.
    world.closeClients();
    await world.gate.settleIfMarked();
  }
  hooks.atEnd?.(world);
  violations.unshift(...world.violations, ...checker.violations, ...recipeChecker.violations,
    ...heldChecker.violations);
  return {
    seed, traceHash: trace.digest(), violations,
    figures: figuresOf(run), simulatedMs: scheduler.nowMs, events: scheduler.eventsRun,
    drawn: drawnOf(settings),
  };
}

function assemble(prng: Prng, scheduler: Scheduler, trace: TraceHash, settings: LeaseSettings):
  Run {
  let quietSinceMs = (): number => -Infinity;
  const checker = new LeaseChecker(() => scheduler.nowMs, settings.timing, () => quietSinceMs());
  const world = new LeaseWorld(prng.fork(), scheduler, trace, settings, checker,
    new SettleGate(scheduler));
  const nemesis = new Nemesis(prng.fork(), scheduler, world.nemesisTarget(), settings.plan,
    settings.safetyMs);
  quietSinceMs = () => Math.max(...world.ids.map((id) => nemesis.quietSinceMs(world.ids[0]!, id)));
  const workload = new LeaseWorkload(prng.fork(), world.clients, checker, {
    ttlMsMin: settings.ttlMsMin, ttlMsMax: settings.ttlMsMax, thinkMsMean: 200, revokeRate: 0.4,
  });
  const recipeChecker = new RecipeChecker(() => scheduler.nowMs,
    settings.recipes.timingViolated);
  const heldChecker = new HeldChecker(() => scheduler.nowMs, (id) => checker.endedAtMs(id));
  const { recipes: r } = settings;
  const recipes = new RecipeWorkload(prng.fork(), world.recipeClients, recipeChecker, checker,
    new FencedResources(scheduler, prng.fork(), recipeChecker), {
      recipes: r.targets, ttlMsMin: r.ttlMsMin, ttlMsMax: r.ttlMsMax, thinkMsMean: 300,
      releaseRate: 0.7, writeIntervalMsMean: r.writeIntervalMsMean,
      freezeBeforeWriteChance: r.freezeBeforeWriteChance,
    }, heldChecker);
  const clientFaults = new ClientFaults(prng.fork(), scheduler,
    world.recipeClients.map((c) => c.host), r.faults);
  const broken = (): boolean => checker.violations.length > 0 || world.violations.length > 0
    || recipeChecker.violations.length > 0 || heldChecker.violations.length > 0;
  const runaway = (): boolean => {
    if (scheduler.eventsRun < EVENTS_MAX) return false;
    world.violations.push({ checker: 'runaway', atMs: scheduler.nowMs,
      message: `more than ${EVENTS_MAX} events: something loops without end` });
    return true;
  };
  return { world, nemesis, workload, recipes, clientFaults, checker, recipeChecker, heldChecker,
    quietSinceMs: () => quietSinceMs(), broken: () => broken() || runaway() };
}

/** The run's phases; stops early at the first violation. */
async function play(run: Run): Promise<void> {
  const { world, nemesis, workload, recipes, clientFaults, checker, broken } = run;
  const { scheduler, settings, gate } = world;
  const sweep = (): void => {
    checker.sweep();
    scheduler.schedule(SWEEP_INTERVAL_MS, sweep);
  };
  nemesis.start();
  clientFaults.start(settings.safetyMs);
  if (settings.transferIntervalMsMean !== undefined) {
    // Transfers go on after the heal, so stale TTLs at elections show; they stop before the end.
    world.startTransfers(settings.transferIntervalMsMean, settings.endMs - 1_500);
  }
  workload.start();
  recipes.start();
  sweep();
  if (await gate.runUntil(settings.safetyMs, broken)) return;
  world.healAll();
  clientFaults.healAll();
  checker.healed(Math.max(0, Math.min(settings.safetyMs, run.quietSinceMs())));
  workload.stopAll();
  recipes.stopAll();
  if (await gate.runUntil(settings.endMs, broken)) return;
  checker.sweep();
}

/** After the end: every member reaches the same applied state (same bytes), within a bound. */
export async function convergence(world: LeaseWorld): Promise<Violation[]> {
  const { scheduler } = world;
  const endMs = scheduler.nowMs;
  const settled = (): boolean => {
    const statuses = [...world.hosts.values()].map((host) => host.process?.core.status());
    const first = statuses[0];
    return first !== undefined && first.commitIndex === first.lastIndex
      && statuses.every((s) => s !== undefined && s.lastIndex === first.lastIndex
        && s.appliedIndex === first.lastIndex);
  };
  await world.gate.runUntil(endMs + SETTLE_MS_MAX, settled);
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

function figuresOf(run: Run): LeaseFigures {
  const { checker, workload, world, nemesis, recipes, recipeChecker, heldChecker } = run;
  const hosts = world.recipeClients.map((c) => c.host.counts);
  const total = (f: (c: (typeof hosts)[number]) => number): number =>
    hosts.reduce((s, c) => s + f(c), 0);
  return {
    leases: { ...checker.counts }, workload: { ...workload.counts }, slack: checker.slacks(),
    leaderChanges: world.counts.leaderChanges, transfers: world.counts.transfers,
    leaderless: leaderlessCounts(world.counts), crashes: nemesis.counts.crashes,
    partitions: nemesis.counts.partitions, pauses: nemesis.counts.pauses,
    snapshots: { ...world.snapshots.counts },
    recipes: {
      timingViolated: world.settings.recipes.timingViolated,
      checks: { ...recipeChecker.counts }, held: { ...heldChecker.counts },
      workload: { ...recipes.counts, ends: { ...recipes.counts.ends },
        holdingEnds: { ...recipes.counts.holdingEnds } },
      clientPauses: total((c) => c.pauses), clientPausedMs: total((c) => c.pausedMs),
      clientCuts: total((c) => c.cuts),
    },
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
    snapshots: settings.snapshots ?? 'server defaults',
    clientDriftRates: settings.clientDriftRates,
    recipes: { ...settings.recipes, faults: { ...settings.recipes.faults,
      // JSON has no Infinity: "never cut" is null.
      cutIntervalMsMean: Number.isFinite(settings.recipes.faults.cutIntervalMsMean)
        ? settings.recipes.faults.cutIntervalMsMean : null } },
  };
}

/** CRC-32C and length of a store's snapshot bytes: equal states, equal digests. */
function snapshotDigest(bytes: Uint8Array): string {
  return `${bytes.length}/${crc32c(bytes).toString(16)}`;
}
