/**
 * Runs a scenario over a range of seeds and collects the verdicts. Deterministic itself; the
 * caller may pass a Clock to measure speed (seeds/s, simulated seconds per wall second).
 */
import { assert } from '../core/assert.js';
import type { Clock } from '../ports/clock.js';
import { SEED_MAX } from './prng.js';
import type {
  Scenario, ScenarioOptions, SeedProgressListener, SeedResult, SummaryReport,
} from './scenario.js';

export interface RunOptions {
  readonly firstSeed: number;
  readonly seedCount: number;
  readonly options: ScenarioOptions;
  /** Stop at the first failing seed (default: run them all and report every failure). */
  readonly stopOnFailure: boolean;
  /** Measures wall time; the simulation itself never reads it. */
  readonly wallClock?: Clock;
  /** Called after each seed (for progress and per-seed lines). */
  readonly onSeed?: (result: SeedResult<unknown>, index: number) => void;
  /** Called as a long seed advances (scenarios that report progress only). */
  readonly onProgress?: SeedProgressListener | undefined;
}

export interface RunReport<F> {
  readonly results: readonly SeedResult<F>[];
  readonly failures: readonly SeedResult<F>[];
  readonly summary: SummaryReport;
  /** Undefined without a wall clock. Unit: ms. */
  readonly wallMs: number | undefined;
  readonly simulatedMs: number;
  readonly events: number;
}

export async function runSeeds<F>(scenario: Scenario<F>, run: RunOptions):
  Promise<RunReport<F>> {
  assert(run.seedCount >= 1, () => `seedCount must be >= 1: ${run.seedCount}`);
  assert(run.firstSeed >= 0 && run.firstSeed <= SEED_MAX, () => `bad first seed ${run.firstSeed}`);
  const startMs = run.wallClock?.monotonicMs();
  const results: SeedResult<F>[] = [];
  const failures: SeedResult<F>[] = [];
  for (let i = 0; i < run.seedCount; i++) {
    const seed = (run.firstSeed + i) % (SEED_MAX + 1);
    const result = await scenario.runSeed(seed, run.options, run.onProgress);
    results.push(result);
    run.onSeed?.(result as SeedResult<unknown>, i);
    if (result.violations.length > 0) {
      failures.push(result);
      if (run.stopOnFailure) break;
    }
  }
  const summary = scenario.summarize(results, run.options);
  const endMs = run.wallClock?.monotonicMs();
  return {
    results,
    failures,
    summary,
    wallMs: startMs === undefined || endMs === undefined ? undefined : endMs - startMs,
    simulatedMs: results.reduce((s, r) => s + r.simulatedMs, 0),
    events: results.reduce((s, r) => s + r.events, 0),
  };
}

/** The command that replays one seed of a run exactly. */
export function replayCommand(scenario: Scenario<unknown>, seed: number,
  options: ScenarioOptions): string {
  const flags: string[] = [`--scenario ${scenario.name}`, `--seed ${seed}`, '--seeds 1'];
  for (const flag of scenario.flags) {
    const value = options[flag.name];
    if (value === undefined || value === flag.defaultValue) continue;
    if (flag.kind === 'boolean') {
      if (value === true) flags.push(`--${flag.name}`);
    } else {
      flags.push(`--${flag.name} ${String(value)}`);
    }
  }
  return `npx conclave sim ${flags.join(' ')}`;
}
