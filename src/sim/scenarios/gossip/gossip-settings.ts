/**
 * The gossip scenario's flags and the settings they give: cluster size, base loss, Lifeguard
 * on, off or both, the split-brain strategy and the SWIM profile, plus test-only overrides.
 */
import { assert } from '../../../core/assert.js';
import {
  SPLIT_BRAIN_STRATEGIES, SWIM_DEFAULTS_LAN, SWIM_DEFAULTS_LOCAL, SWIM_NO_MUTANTS,
  type SplitBrainStrategy, type SwimConfig, type SwimMutants,
} from '../../../core/swim/index.js';
import { mutantFlagDescription } from '../../mutant-catches.js';
import type { MutantCatch, ScenarioFlag, ScenarioOptions } from '../../scenario.js';

export const GOSSIP_MEMBERS_MAX = 5000;
/**
 * Forged joins in one flood: 1,000 is the local profile's admission burst (config.ts), so
 * every one of them may be admitted; more would only be refused by the budget.
 */
export const JOIN_FLOOD_MAX = 1000;
export const LIFEGUARD_CHOICES = ['on', 'off', 'both'] as const;
export const PROFILE_CHOICES = ['local', 'lan'] as const;
export type GossipProfile = (typeof PROFILE_CHOICES)[number];
export const GOSSIP_MUTANT_NAMES = Object.keys(SWIM_NO_MUTANTS) as (keyof SwimMutants)[];

/**
 * Where each SWIM mutant is caught: measured on 2026-12-02 (deadWithoutSuspicion again at
 * h/audit18: seed 1 no longer fails; all three again at h/coord, after the revival claim)
 * with `conclave sim --scenario gossip --seed 1 --seeds 6 --mutant M --members 16
 * [--loss 0.05]`, the seeds that failed and the
 * checker that fired first on the first of them. test/sim/mutant-catches.test.ts replays it.
 */
export const GOSSIP_MUTANT_CATCHES: Readonly<Record<keyof SwimMutants, MutantCatch>> = {
  deadWithoutSuspicion: { scenario: 'gossip', flags: { members: 16, loss: 0.05 }, first: 1,
    count: 6, caughtOn: [2, 3, 4, 6], checker: 'false-dead-bound',
    note: 'seeds 8-10 are caught too' },
  aliveAtEqualIncarnation: { scenario: 'gossip', flags: { members: 16 }, first: 1, count: 6,
    caughtOn: [1, 2, 3, 5, 6], checker: 'incarnation-order' },
  noPiggyback: { scenario: 'gossip', flags: { members: 16, loss: 0.05 }, first: 1, count: 6,
    caughtOn: [], checker: 'view-agreement',
    note: 'the separate gossip rounds still carry the updates; only in SWIM\'s own '
      + 'configuration (gossipFanout 0, no flag: test/sim/scenarios/gossip/gossip-mutants.test.ts) '
      + 'view-agreement catches it, at seed 1' },
};

export const GOSSIP_FLAGS: readonly ScenarioFlag[] = [
  {
    name: 'members', kind: 'integer', defaultValue: 50, min: 8, max: GOSSIP_MEMBERS_MAX,
    description: 'cluster size (members n1..nN; n1 bootstraps, the others join through it)',
  },
  {
    name: 'loss', kind: 'number', min: 0, max: 0.9, defaultValue: undefined,
    description: 'base packet loss rate (default: drawn per seed, 0 for half the seeds)',
  },
  {
    name: 'duration-s', kind: 'number', min: 1, max: 86_400, defaultValue: undefined,
    description: 'simulated seconds per seed (default and minimum: what the script needs)',
  },
  {
    name: 'lifeguard', kind: 'string', defaultValue: 'on', choices: LIFEGUARD_CHOICES,
    description: 'Lifeguard refinements: on, off, or both (each seed twice, same faults)',
  },
  {
    name: 'strategy', kind: 'string', defaultValue: 'keep-majority',
    choices: SPLIT_BRAIN_STRATEGIES,
    description: 'split-brain strategy of the emergent leader',
  },
  {
    name: 'profile', kind: 'string', defaultValue: 'local', choices: PROFILE_CHOICES,
    description: 'SWIM timing profile: local (200 ms probes) or lan (memberlist, 1 s probes)',
  },
  {
    name: 'hostile', kind: 'boolean', defaultValue: false,
    description: 'a forger without the keyring injects SWIM messages of every kind with '
      + 'implausible and malformed fields under any id (hostile-gossip.ts)',
  },
  {
    name: 'join-flood', kind: 'integer', defaultValue: 0, min: 0, max: JOIN_FLOOD_MAX,
    description: 'forged joins (ids that never answer a probe) sent in one burst after the '
      + 'warm-up, within the admission budget (hostile-gossip.ts, `joinFlood`)',
  },
  {
    name: 'mutant', kind: 'string', defaultValue: undefined, choices: GOSSIP_MUTANT_NAMES,
    description: mutantFlagDescription('SWIM bug'),
  },
];

export interface GossipSettings {
  readonly members: number;
  /** Base loss on every message; undefined: drawn per seed. Unit: ratio. */
  readonly lossRate: number | undefined;
  /** Requested simulated time; the script stretches its fault segments to fill it. Unit: ms. */
  readonly durationMs: number | undefined;
  /** The Lifeguard settings to run each seed with, in order. */
  readonly lifeguardRuns: readonly boolean[];
  readonly strategy: SplitBrainStrategy;
  readonly profile: GossipProfile;
  /** The planted bug, if any (TEST-ONLY). */
  readonly mutant: keyof SwimMutants | undefined;
  /** Whether a hostile forger runs (hostile-gossip.ts). */
  readonly hostile: boolean;
  /** Forged joins sent in one burst after the warm-up (0: none). */
  readonly joinFlood: number;
}

/** Test-only knobs: to prove that the checkers bite, and to keep tests short. */
export interface GossipTestOverrides {
  /** Merged into every member's config (the script keeps the unmodified timing). */
  readonly config?: Partial<SwimConfig>;
  /** Stops a run at its first violation (a bite test needs only one). */
  readonly stopAtFirstViolation?: boolean;
  /** Cuts the run short at this virtual time, skipping the end-of-run check (profiling). */
  readonly cutAtMs?: number;
}

export function gossipSettings(options: ScenarioOptions): GossipSettings {
  const members = options['members'];
  assert(typeof members === 'number' && Number.isInteger(members) && members >= 8
    && members <= GOSSIP_MEMBERS_MAX,
  () => `members must be an integer in [8, ${GOSSIP_MEMBERS_MAX}]: ${String(members)}`);
  const loss = options['loss'];
  assert(loss === undefined || (typeof loss === 'number' && loss >= 0 && loss < 1),
    () => `loss must be in [0, 1): ${String(loss)}`);
  const durationS = options['duration-s'];
  assert(durationS === undefined || (typeof durationS === 'number' && durationS > 0),
    () => `duration-s must be > 0: ${String(durationS)}`);
  const lifeguard = options['lifeguard'] ?? 'on';
  assert(LIFEGUARD_CHOICES.includes(lifeguard as never), () => `lifeguard: ${String(lifeguard)}`);
  const strategy = options['strategy'] ?? 'keep-majority';
  assert(SPLIT_BRAIN_STRATEGIES.includes(strategy as SplitBrainStrategy),
    () => `strategy: ${String(strategy)}`);
  const profile = options['profile'] ?? 'local';
  assert(PROFILE_CHOICES.includes(profile as GossipProfile), () => `profile: ${String(profile)}`);
  const mutant = options['mutant'];
  const joinFlood = options['join-flood'] ?? 0;
  assert(typeof joinFlood === 'number' && Number.isInteger(joinFlood) && joinFlood >= 0
    && joinFlood <= JOIN_FLOOD_MAX,
  () => `join-flood must be an integer in [0, ${JOIN_FLOOD_MAX}]: ${String(joinFlood)}`);
  assert(mutant === undefined || GOSSIP_MUTANT_NAMES.includes(mutant as keyof SwimMutants),
    () => `mutant: ${String(mutant)}`);
  return {
    members,
    lossRate: loss,
    durationMs: durationS === undefined ? undefined : durationS * 1000,
    lifeguardRuns: lifeguard === 'both' ? [true, false] : [lifeguard === 'on'],
    strategy: strategy as SplitBrainStrategy,
    profile: profile as GossipProfile,
    mutant: mutant as keyof SwimMutants | undefined,
    hostile: options['hostile'] === true,
    joinFlood,
  };
}

/** The members' config for one run (Lifeguard on or off), before test overrides. */
export function gossipConfig(settings: GossipSettings, lifeguard: boolean): SwimConfig {
  const base = settings.profile === 'lan' ? SWIM_DEFAULTS_LAN : SWIM_DEFAULTS_LOCAL;
  return {
    ...base,
    lifeguard,
    mutants: settings.mutant === undefined
      ? SWIM_NO_MUTANTS : { ...SWIM_NO_MUTANTS, [settings.mutant]: true },
    splitBrainStrategy: settings.strategy,
    // More than half of the full cluster: two sides of a split can never both reach it.
    staticQuorumSize: settings.strategy === 'static-quorum'
      ? Math.floor(settings.members / 2) + 1 : 0,
  };
}
