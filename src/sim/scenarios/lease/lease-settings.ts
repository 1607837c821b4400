/**
 * The lease scenario's flags and what each seed draws (swarm testing): Raft and lease timing,
 * network quality, the nemesis plan, leadership transfers, and each client's clock rate.
 * Every drawn config is valid; every drift is within ρ (Raft's `clockRateErrorMax`, which the
 * lease bounds use).
 */
import { assert } from '../../../core/assert.js';
import { leaseEndBoundsMs, leaseTtlMsMin } from '../../../core/kv/index.js';
import { RAFT_DEFAULTS_LOCAL, type RaftTuning } from '../../../core/raft/index.js';
import { randomFloat, randomInt } from '../../../core/random.js';
import {
  LEASE_NO_MUTANTS, type LeaseConfig, type LeaseMutants,
} from '../../../runtime/lease/index.js';
import { FAULT_KINDS, drawNemesisPlan, type NemesisPlan } from '../../nemesis.js';
import type { Prng } from '../../prng.js';
import type { ScenarioFlag, ScenarioOptions } from '../../scenario.js';
import { NETWORK_FAULTS_NONE, type NetworkFaults } from '../../sim-network.js';
import type { LeaseCheckerTiming } from './lease-checker.js';

export const LEASE_MUTANT_NAMES = Object.keys(LEASE_NO_MUTANTS) as (keyof LeaseMutants)[];

export const LEASE_FLAGS: readonly ScenarioFlag[] = [
  { name: 'nodes', kind: 'integer', description: 'consistent-core members', defaultValue: 3,
    min: 3, max: 7 },
  { name: 'clients', kind: 'integer', description: 'simulated clients, each holding one lease '
    + 'at a time', defaultValue: 6, min: 1, max: 32 },
  { name: 'safety-s', kind: 'number', description: 'simulated seconds of faults (then heal, '
    + 'and long enough for every lease to end)', defaultValue: 10, min: 1, max: 3600 },
  { name: 'mutant', kind: 'string', description: 'TEST-ONLY: plant a known lease bug (the '
    + 'run must fail)', defaultValue: undefined, choices: LEASE_MUTANT_NAMES },
];

/** Everything one seed runs with. */
export interface LeaseSettings {
  readonly nodes: number;
  readonly clients: number;
  readonly safetyMs: number;
  /** The end of the run: after the heal, long enough for the last lease's upper bound. */
  readonly endMs: number;
  readonly tuning: RaftTuning;
  readonly lease: LeaseConfig;
  readonly mutant: keyof LeaseMutants | undefined;
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
}

/** Share of the extremes ±ρ among client clock rates (the bounds are tightest there). */
const EXTREME_DRIFT_SHARE = 2 / 3;

export function drawLeaseSettings(prng: Prng, options: ScenarioOptions): LeaseSettings {
  const nodes = integerOption(options, 'nodes');
  const clients = integerOption(options, 'clients');
  const safetyMs = numberOption(options, 'safety-s') * 1000;
  const mutant = options['mutant'];
  assert(mutant === undefined || LEASE_MUTANT_NAMES.includes(mutant as keyof LeaseMutants),
    () => `unknown lease mutant ${String(mutant)}`);
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
    ...(mutant === undefined ? {} : { mutants: { ...LEASE_NO_MUTANTS, [mutant as string]: true } }),
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
    downtimeMsMax: 3_000, pauseMsMax: 2_000, partitionMsMax: 4_000,
    driftRateMax: rho, crashedMax: nodes,
  });
  const transferIntervalMsMean = randomFloat(prng) < 0.25 ? undefined
    : 300 + 1_700 * randomFloat(prng);
  const clientDriftRates = Array.from({ length: clients }, () => {
    const roll = randomFloat(prng);
    if (roll < EXTREME_DRIFT_SHARE / 2) return rho;
    if (roll < EXTREME_DRIFT_SHARE) return -rho;
    return rho * (2 * randomFloat(prng) - 1);
  });
  // Every lease ends by the bound counted from the heal; then 2 s to settle and compare.
  const livenessMs = leaseEndBoundsMs(ttlMsMax, timing).latestMs + timing.allowanceMs + 2_000;
  return {
    nodes, clients, safetyMs, endMs: Math.ceil(safetyMs + livenessMs), tuning, lease,
    mutant: mutant as keyof LeaseMutants | undefined, network, plan, transferIntervalMsMean,
    ttlMsMin, ttlMsMax, clientDriftRates, timing,
  };
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
