/**
 * The lease scenario's flags and what each seed draws (swarm testing): Raft and lease timing,
 * network quality, the nemesis plan, leadership transfers, each client's clock rate, and the
 * elections and locks (how many clients campaign, for which names, and their machines' faults).
 * Every drawn config is valid; every drift is within ρ (Raft's `clockRateErrorMax`, which the
 * lease bounds use); client freezes stay within the lease margin unless `--timing-violated`.
 */
import { assert } from '../../../core/assert.js';
import type { CampaignMutant } from '../../../core/election/index.js';
import {
  LEASE_KEEPALIVE_FRACTION, leaseEndBoundsMs, leaseHolderFraction, leaseTtlMsMin,
} from '../../../core/kv/index.js';
import { RAFT_DEFAULTS_LOCAL, type RaftTuning } from '../../../core/raft/index.js';
import { randomFloat, randomInt } from '../../../core/random.js';
import {
  LEASE_NO_MUTANTS, type LeaseConfig, type LeaseMutants,
} from '../../../runtime/lease/index.js';
import type { CoreMutants } from '../../../runtime/core/index.js';
import { FAULT_KINDS, drawNemesisPlan, type NemesisPlan } from '../../nemesis.js';
import type { Prng } from '../../prng.js';
import { mutantFlagDescription } from '../../mutant-catches.js';
import type { MutantCatch, ScenarioFlag, ScenarioOptions } from '../../scenario.js';
import { NETWORK_FAULTS_NONE, type NetworkFaults } from '../../sim-network.js';
import type { ClientFaultPlan } from './client-faults.js';
import type { LeaseCheckerTiming } from './lease-checker.js';
import type { RecipeTarget } from './recipe-workload.js';

/** Every campaign mutant once (the compiler lists a new one here). */
const CAMPAIGN_MUTANTS: Readonly<Record<CampaignMutant, true>> = {
  claimWithoutLeaseRecheck: true, heldWithoutClockCheck: true,
};
const CAMPAIGN_MUTANT_NAMES = Object.keys(CAMPAIGN_MUTANTS) as CampaignMutant[];

/** The planted bugs the scenario knows: the servers' lease bugs, then the recipes' ones. */
export const LEASE_MUTANT_NAMES: readonly string[] = [
  ...Object.keys(LEASE_NO_MUTANTS), ...CAMPAIGN_MUTANT_NAMES,
];

/**
 * Where each lease mutant is caught: measured on 2026-12-02 with `conclave sim --scenario lease
 * --seed 1 --seeds 20 --mutant M [flags]` (defaults otherwise), the seeds that failed and the
 * checker that fired first on the first of them. test/sim/mutant-catches.test.ts replays it.
 */
export const LEASE_MUTANT_CATCHES: Readonly<Record<keyof LeaseMutants | CampaignMutant,
  MutantCatch>> = {
  deposedLeaderRevokes: { scenario: 'lease', flags: {}, first: 1, count: 20,
    caughtOn: [1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 14, 17, 18, 20], checker: 'never-earlier',
    note: 'holder-safety fires too on all but seed 14' },
  ttlResetOnElection: { scenario: 'lease', flags: {}, first: 1, count: 20,
    caughtOn: [3, 4, 6, 7, 8, 9, 11, 12, 14, 17, 18, 20], checker: 'not-much-later-after-heal',
    note: 'seed 4 by not-much-later' },
  claimWithoutLeaseRecheck: { scenario: 'lease', flags: {}, first: 1, count: 20,
    caughtOn: Array.from({ length: 20 }, (_, i) => i + 1), checker: 'term',
    note: 'it skips the claim, so its term restarts at 1; no-overlap catches the directed shape '
      + 'in test/sim/scenarios/lease/shipped-client.test.ts' },
  heldWithoutClockCheck: { scenario: 'lease', flags: { 'timing-violated': true }, first: 1,
    count: 20, caughtOn: [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20],
    checker: 'held', note: 'without --timing-violated no freeze outlasts the margin: 0 of seeds '
      + '1–20' },
};

/**
 * The election and lock clients' lease margin: the client library's default leaseMarginMs
 * (src/client/config.ts), which is also their stall threshold. Unit: ms.
 */
export const RECIPE_MARGIN_MS = 500;

/**
 * The lease clients' margin (their leaseMarginMs). Unit: ms. Why 100, not the client
 * library's default 500 (RECIPE_MARGIN_MS, which the election and lock clients use):
 * holder-safety then checks the servers against a deadline closer to the bound.
 */
export const HOLDER_MARGIN_MS = 100;

export const LEASE_FLAGS: readonly ScenarioFlag[] = [
  { name: 'nodes', kind: 'integer', description: 'consistent-core members', defaultValue: 3,
    min: 3, max: 7 },
  { name: 'clients', kind: 'integer', description: 'simulated lease clients, each holding one '
    + 'lease at a time', defaultValue: 6, min: 1, max: 32 },
  { name: 'safety-s', kind: 'number', description: 'simulated seconds of faults (then heal, '
    + 'and long enough for every lease to end)', defaultValue: 10, min: 1, max: 3600 },
  { name: 'recipe-clients', kind: 'integer', description: 'simulated clients campaigning in '
    + 'elections and locks (default: drawn from 4 to 6)', defaultValue: undefined, min: 0,
  max: 16 },
  { name: 'timing-violated', kind: 'boolean', description: 'freeze election and lock clients '
    + 'longer than their TTL: overlaps are then expected and counted; the fence must still '
    + 'accept no stale write', defaultValue: false },
  { name: 'mutant', kind: 'string', description: mutantFlagDescription('lease or recipe bug'),
    defaultValue: undefined, choices: LEASE_MUTANT_NAMES },
  { name: 'snapshots', kind: 'boolean', description: 'members snapshot every few dozen entries '
    + '(in steps spread over virtual time), compact their logs, and catch up through '
    + 'InstallSnapshot in small chunks; every snapshot at an index must hold the same bytes',
  defaultValue: false },
];

/** A seed's snapshot settings (`--snapshots`): small, so compaction and installs are frequent. */
export interface LeaseSnapshotSettings {
  /** RaftRuntimeConfig.snapshotEntries. Unit: entries. */
  readonly entries: number;
  /** RaftRuntimeConfig.snapshotCatchUpEntries. Unit: entries. */
  readonly catchUpEntries: number;
  /** RaftConfig.snapshotChunkBytesMax. Unit: bytes. */
  readonly chunkBytes: number;
  /** RaftRuntimeConfig.snapshotStepIntervalMs: a snapshot's steps this far apart. Unit: ms. */
  readonly stepIntervalMs: number;
}

/** Everything one seed runs with. */
export interface LeaseSettings {
  readonly nodes: number;
  readonly clients: number;
  readonly safetyMs: number;
  /** The end of the run: after the heal, long enough for the last lease's upper bound. */
  readonly endMs: number;
  readonly tuning: RaftTuning;
  readonly lease: LeaseConfig;
  /** The planted bug (a LeaseMutants or a CampaignMutant name), if any. */
  readonly mutant: string | undefined;
  readonly network: NetworkFaults;
  readonly plan: NemesisPlan;
  /** Mean time between leadership transfers; undefined: none this seed. Unit: ms. */
  readonly transferIntervalMsMean: number | undefined;
  /** Grants ask for a TTL in [ttlMsMin, ttlMsMax]. Unit: ms. */
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
  /** Each client's clock rate error, within ±ρ. Unit: ratio. */
  readonly clientDriftRates: readonly number[];
  readonly timing: LeaseCheckerTiming;
  readonly recipes: RecipeSettings;
  /** Undefined without `--snapshots` (the server's defaults: a snapshot every 10 000 entries). */
  readonly snapshots: LeaseSnapshotSettings | undefined;
  /** Planted server-path bugs (scenario `core`); undefined: none. */
  readonly coreMutants?: CoreMutants;
}

/** The elections and locks of a seed. */
export interface RecipeSettings {
  /** Each election or lock client's clock rate error, within ±ρ. Unit: ratio. */
  readonly clientDriftRates: readonly number[];
  readonly targets: readonly RecipeTarget[];
  /** Leases are granted with a TTL in [ttlMsMin, ttlMsMax]. Unit: ms. */
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
  readonly timingViolated: boolean;
  readonly mutants: readonly CampaignMutant[];
  readonly faults: ClientFaultPlan;
  /** Mean time between a holder's writes to the fenced resource. Unit: ms. */
  readonly writeIntervalMsMean: number;
  /** Chance that a write check is followed by a freeze longer than the TTL. */
  readonly freezeBeforeWriteChance: number;
}

/** Share of the extremes ±ρ among client clock rates (the bounds are tightest there). */
const EXTREME_DRIFT_SHARE = 2 / 3;

export function drawLeaseSettings(prng: Prng, options: ScenarioOptions): LeaseSettings {
  const nodes = integerOption(options, 'nodes');
  const clients = integerOption(options, 'clients');
  const safetyMs = numberOption(options, 'safety-s') * 1000;
  const mutant = options['mutant'];
  assert(mutant === undefined || LEASE_MUTANT_NAMES.includes(String(mutant)),
    () => `unknown lease mutant ${String(mutant)}`);
  const leaseMutant = mutant !== undefined && String(mutant) in LEASE_NO_MUTANTS;
  const pick = <T>(choices: readonly T[]): T => choices[randomInt(prng, 0, choices.length)]!;
  const tuning: RaftTuning = {
    ...RAFT_DEFAULTS_LOCAL,
    electionTimeoutMsMax: RAFT_DEFAULTS_LOCAL.electionTimeoutMsMin + pick([100, 300]),
  };
  const rho = tuning.clockRateErrorMax;
  const lease: LeaseConfig = {
    checkpointIntervalMs: pick([100, 250, 500, 1000]),
    // Small entries now and then, so checkpoints and expiries go out in several.
    leasesPerEntryMax: pick([2, 1000]),
    retryDelayMs: 50,
    // As `conclave server` runs: keep-alives share rounds one heartbeat apart.
    keepAliveLingerMs: tuning.heartbeatIntervalMs,
    ...(leaseMutant ? { mutants: { ...LEASE_NO_MUTANTS, [String(mutant)]: true } } : {}),
  };
  const ttlMsMin = leaseTtlMsMin(tuning);
  const ttlMsMax = 2 * ttlMsMin;
  const timing: LeaseCheckerTiming = {
    electionTimeoutMsMax: tuning.electionTimeoutMsMax, clockRateErrorMax: rho,
    checkpointIntervalMs: lease.checkpointIntervalMs,
    allowanceMs: 2 * tuning.heartbeatIntervalMs + lease.retryDelayMs,
    settleMs: 3 * tuning.electionTimeoutMsMax,
  };
  const network: NetworkFaults = {
    ...NETWORK_FAULTS_NONE,
    duplicateRate: pick([0, 0.03]),
    reorderStreams: pick([false, true]),
    latencyMsMeanExtra: 0.2 + 2 * randomFloat(prng),
    latencyMsMax: 10,
  };
  const plan = drawNemesisPlan(prng, {
    kinds: FAULT_KINDS, faultIntervalMsMin: 300, faultIntervalMsMax: 4_000,
    // With --snapshots, longer downtimes: a member comes back behind the others' compaction.
    downtimeMsMax: options['snapshots'] === true ? 6_000 : 3_000, pauseMsMax: 2_000,
    partitionMsMax: 4_000,
    driftRateMax: rho, crashedMax: nodes,
  });
  const transferIntervalMsMean = randomFloat(prng) < 0.25 ? undefined
    : 300 + 1_700 * randomFloat(prng);
  const clientDriftRates = Array.from({ length: clients }, () => drawDrift(prng, rho));
  // Every lease ends by the bound counted from the heal; then 2 s to settle and compare.
  const recipes = drawRecipeSettings(prng, options, tuning,
    mutant !== undefined && !leaseMutant ? [mutant as CampaignMutant] : []);
  const longestTtlMs = Math.max(ttlMsMax, recipes.ttlMsMax);
  const livenessMs = leaseEndBoundsMs(longestTtlMs, timing).latestMs + timing.allowanceMs
    + 2_000;
  // Drawn last, and only with the flag, so seeds without it run as they always did.
  const snapshots = options['snapshots'] === true ? {
    entries: pick([8, 25, 80]), catchUpEntries: pick([0, 2, 10]),
    chunkBytes: pick([64, 512, 4096]), stepIntervalMs: pick([0, 1, 5]),
  } : undefined;
  return {
    nodes, clients, safetyMs, endMs: Math.ceil(safetyMs + livenessMs), tuning, lease,
    mutant: mutant === undefined ? undefined : String(mutant), network, plan,
    transferIntervalMsMean, ttlMsMin, ttlMsMax, clientDriftRates, timing, recipes, snapshots,
  };
}

/**
 * The elections and locks: 4–6 clients (unless `--recipe-clients`) on one election, or on an
 * election and a lock; their clocks drift like the lease clients'; their machines freeze and
 * lose the network now and then.
 */
function drawRecipeSettings(prng: Prng, options: ScenarioOptions, tuning: RaftTuning,
  mutants: readonly CampaignMutant[]): RecipeSettings {
  const rho = tuning.clockRateErrorMax;
  const ttlMsMin = recipeTtlMsMin(tuning);
  const ttlMsMax = 2 * ttlMsMin;
  const given = options['recipe-clients'];
  const count = given === undefined ? randomInt(prng, 4, 7)
    : integerOption(options, 'recipe-clients');
  const timingViolated = options['timing-violated'] === true;
  const targets: RecipeTarget[] = [{ kind: 'election', name: 'leader' }];
  if (randomFloat(prng) < 0.5) targets.push({ kind: 'lock', name: 'report' });
  const clientDriftRates = Array.from({ length: count }, () => drawDrift(prng, rho));
  const faults: ClientFaultPlan = {
    pauseIntervalMsMean: 200 + 1_800 * randomFloat(prng),
    // Within the assumptions a freeze never exceeds the margin (the stall threshold) on any
    // client clock: a clock running ρ fast shows a real freeze as (1 + ρ) times longer.
    pauseMsMax: RECIPE_MARGIN_MS / (1 + rho),
    longPauseShare: timingViolated ? 0.2 : 0,
    longPauseMsMax: 2.5 * ttlMsMax,
    cutIntervalMsMean: randomFloat(prng) < 0.25 ? Infinity : 1_000 + 4_000 * randomFloat(prng),
    cutMsMax: 2 * ttlMsMax,
  };
  return {
    clientDriftRates, targets, timingViolated, mutants, faults, ttlMsMin, ttlMsMax,
    writeIntervalMsMean: 100 + 400 * randomFloat(prng),
    freezeBeforeWriteChance: timingViolated ? 0.1 : 0,
  };
}

/**
 * The shortest TTL an election or lock client asks for: as leaseTtlMsMin, with the margin
 * taken off the holder's deadline too, so a holder keeps its lease through one leader change
 * (2 × electionTimeoutMsMax with no keep-alive answered). At the servers' minimum, every leader
 * change would end the leadership: the recipe would be tested mostly losing.
 */
function recipeTtlMsMin(tuning: RaftTuning): number {
  const usable = leaseHolderFraction(tuning.clockRateErrorMax) - LEASE_KEEPALIVE_FRACTION;
  return Math.max(leaseTtlMsMin(tuning),
    Math.ceil((2 * tuning.electionTimeoutMsMax + RECIPE_MARGIN_MS) / usable));
}

/** A clock rate error within ±ρ, at the extremes two times in three. */
function drawDrift(prng: Prng, rho: number): number {
  const roll = randomFloat(prng);
  if (roll < EXTREME_DRIFT_SHARE / 2) return rho;
  if (roll < EXTREME_DRIFT_SHARE) return -rho;
  return rho * (2 * randomFloat(prng) - 1);
}

function numberOption(options: ScenarioOptions, name: string): number {
  const value = options[name];
  assert(typeof value === 'number', () => `option ${name} must be a number: ${String(value)}`);
  return value;
}

function integerOption(options: ScenarioOptions, name: string): number {
  const value = numberOption(options, name);
  assert(Number.isSafeInteger(value), () => `option ${name} must be an integer: ${value}`);
  return value;
}
