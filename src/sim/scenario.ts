/**
 * What a simulation scenario is: a named experiment that runs one seed deterministically and
 * reports the checkers' verdict, a trace hash and its figures. The runner (runner.ts) loops
 * over seeds; the CLI (`conclave sim`) parses flags into a scenario's options.
 */
import type { SimRecorder } from './sim-recorder.js';

/** A broken invariant, with enough context to understand it without a debugger. */
export interface Violation {
  /** The checker's name, for example `election-safety`. */
  readonly checker: string;
  /** Virtual time of the step after which the check failed. Unit: ms. */
  readonly atMs: number;
  readonly message: string;
}

/** The outcome of one seed. */
export interface SeedResult<F> {
  readonly seed: number;
  readonly traceHash: string;
  readonly violations: readonly Violation[];
  /** Scenario-specific figures; the scenario's `summarize` aggregates them. */
  readonly figures: F;
  /** Simulated time covered. Unit: ms. */
  readonly simulatedMs: number;
  /** Events the scheduler ran. */
  readonly events: number;
  /** The options the seed drew (swarm testing), printed on failure. */
  readonly drawn: Readonly<Record<string, unknown>>;
}

/** A flag a scenario accepts beyond the common ones, for `--help` and validation. */
export interface ScenarioFlag {
  readonly name: string;
  readonly description: string;
  readonly kind: 'integer' | 'number' | 'boolean' | 'string';
  readonly defaultValue: number | boolean | string | undefined;
  readonly min?: number;
  readonly max?: number;
  readonly choices?: readonly string[];
}

export type ScenarioOptions = Readonly<Record<string, number | boolean | string | undefined>>;

/**
 * Where a planted mutant (TEST-ONLY `--mutant`) is caught, as measured: a mutant shows only on
 * seeds whose faults reach its bug, so a run that is to catch it needs those seeds (or a
 * scenario that aims at the bug). Each table sits beside its scenario's mutant names, and
 * test/sim/mutant-catches.test.ts replays the first seed of every entry.
 */
export interface MutantCatch {
  /** The scenario whose seeds catch it. */
  readonly scenario: string;
  /** Flags beyond `--seed` and `--mutant` (name → value; `true` for a switch). */
  readonly flags: ScenarioOptions;
  /** The seeds measured: `--seed first --seeds count`. */
  readonly first: number;
  readonly count: number;
  /** The seeds of that range whose run broke an invariant (empty: not caught there). */
  readonly caughtOn: readonly number[];
  /** The checker that fires on them (the first one, when several do). */
  readonly checker: string;
  /** Why it escapes, or what else to know. */
  readonly note?: string;
}

/**
 * How far a long seed has come, reported by scenarios whose seeds run for minutes (a
 * 1,000-member gossip seed) after each chunk of simulated time, so the user sees it move.
 */
export interface SeedProgress {
  readonly seed: number;
  /** Simulated time covered so far. Unit: ms. */
  readonly simulatedMs: number;
  /** Events the scheduler ran so far. */
  readonly events: number;
  /** What the seed is doing now (a phase of its script), when the scenario knows. */
  readonly phase?: string;
}

export type SeedProgressListener = (progress: SeedProgress) => void;

export interface Scenario<F> {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly ScenarioFlag[];
  /**
   * Runs one seed. Must be deterministic in (seed, options); `progress`, when given, is told
   * how far a long seed has come, and a `recorder` (scenarios that support `--record`) is
   * told what happened: neither changes the run. A scenario that runs async code (the
   * shipped client, in `lease`) returns a promise; its events still run one at a time.
   */
  runSeed(seed: number, options: ScenarioOptions, progress?: SeedProgressListener,
    recorder?: SimRecorder): SeedResult<F> | Promise<SeedResult<F>>;
  /** Whether runSeed fills a recorder (`conclave sim --record`). */
  readonly records?: boolean;
  /** Where each of its `--mutant` choices is caught (measured), for the help and the notes. */
  readonly mutantCatches?: Readonly<Record<string, MutantCatch>>;
  /** Lines of figures over all seeds run, for the final report. */
  summarize(results: readonly SeedResult<F>[], options: ScenarioOptions): SummaryReport;
}

export interface SummaryReport {
  /** Human-readable lines. */
  readonly lines: readonly string[];
  /** The same figures as data, for `--json`. */
  readonly data: Readonly<Record<string, unknown>>;
  /** Violations found by checks over all seeds (for example a statistic out of bound). */
  readonly violations: readonly Violation[];
}
