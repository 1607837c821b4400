/**
 * `conclave sim`: runs a simulation scenario over seeds, prints a trace hash per seed and the
 * scenario's figures, and on a failure the exact command that replays it. Exit 0 only when every
 * checker held on every seed.
 */
import { randomInt } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { Command, Option } from 'commander';
import { SystemClock } from '../../adapters/system-clock.js';
import { mutantCatchLines, mutantEscapedNote } from '../../sim/mutant-catches.js';
import { SEED_MAX } from '../../sim/prng.js';
import { replayCommand, runSeeds, type RunReport } from '../../sim/runner.js';
import type {
  MutantCatch, Scenario, ScenarioFlag, ScenarioOptions, SeedProgress, SeedProgressListener,
  SeedResult,
} from '../../sim/scenario.js';
import { SCENARIOS } from '../../sim/scenarios/index.js';
import { integerIn, numberIn } from '../parse.js';
import type { CliIo } from '../io.js';
import { simProgress } from './sim-progress.js';
import { recordSeed } from './sim-record.js';

export function simCommand(io: CliIo): Command {
  const command = new Command('sim')
    .description('run a deterministic simulation scenario under faults, over many seeds')
    .addOption(new Option('--scenario <name>', 'scenario to run').choices([...SCENARIOS.keys()])
      .makeOptionMandatory())
    .option('--seed <n>', `first seed (0..${SEED_MAX}; default: a fresh one, always printed)`,
      integerIn(0, SEED_MAX))
    .option('--seeds <n>', 'number of consecutive seeds to run', integerIn(1, 10_000_000), 1)
    .option('--stop-on-failure', 'stop at the first failing seed', false)
    .option('--quiet', 'no line per seed, only failures and the summary', false)
    .option('--json', 'print one JSON object with every seed and the summary', false)
    .option('--jobs <n>', 'worker threads running seeds in parallel (default: one per core, ' +
      'when running the built CLI)', integerIn(1, 64))
    .option('--record <file>', 'write the first failing seed (else the first seed) as a ' +
      'recording for `conclave replay FILE`');
  for (const flag of allScenarioFlags()) command.addOption(optionFor(flag));
  command.addHelpText('after', scenarioHelp());
  command.action(async (opts: Record<string, unknown>) => {
    io.exitCode = await runSim(io, opts, command);
  });
  return command;
}

async function runSim(io: CliIo, opts: Record<string, unknown>, command: Command): Promise<number> {
  const scenario = SCENARIOS.get(String(opts['scenario']))!;
  const checked = checkUsage(io, scenario, opts, command);
  if (checked === undefined) return 2;
  const { options, record } = checked;
  const firstSeed = typeof opts['seed'] === 'number' ? opts['seed'] : randomInt(0, SEED_MAX);
  const seedCount = opts['seeds'] as number;
  const json = opts['json'] === true;
  const quiet = opts['quiet'] === true || json;
  if (!json) {
    io.out(`scenario ${scenario.name}: seeds ${firstSeed}..${firstSeed + seedCount - 1} `
      + `(${seedCount})`);
  }
  const progress = simProgress(seedCount, !json);
  const onSeed = (result: SeedResult<unknown>): void => {
    progress.seedDone(result.violations.length > 0);
    if ((!quiet && !progress.active) || result.violations.length > 0) io.out(seedLine(result));
    if (result.violations.length > 0 && !json) printFailure(io, scenario, result, options);
  };
  const onProgress = opts['quiet'] === true ? undefined : progressPrinter(io);
  const run = { firstSeed, seedCount, options, stopOnFailure: opts['stopOnFailure'] === true,
    onSeed, onProgress };
  const report = await executeSeeds(scenario, run, jobCount(opts['jobs'], seedCount));
  progress.stop();
  const interrupted = report.inProgress !== undefined;
  if (interrupted) {
    io.out(`interrupted: ${report.results.length} of ${seedCount} seeds done` +
      (report.inProgress!.length === 0 ? '' : '; in progress: ' +
        report.inProgress!.map((seed) => replayCommand(scenario, seed, options)).join(' ; ')));
  }
  if (record !== undefined
    && !await recordSeed(io, scenario, record, report.results, options, json)) return 1;
  const violations = printReport(io, scenario, report, { options, firstSeed, json, interrupted });
  return violations > 0 ? 1 : interrupted ? 130 : 0;
}

/** The scenario's options and the `--record` file, or undefined after printing a usage error. */
function checkUsage(io: CliIo, scenario: Scenario<unknown>, opts: Record<string, unknown>,
  command: Command): { options: ScenarioOptions; record: string | undefined } | undefined {
  const foreign = foreignFlags(scenario, command);
  if (foreign.length > 0) {
    io.err(`conclave sim: ${foreign.join(', ')} not accepted by scenario '${scenario.name}' ` +
      `(it accepts: ${scenario.flags.map((f) => `--${f.name}`).join(', ') || 'no extra flags'})`);
    return undefined;
  }
  const options = scenarioOptions(scenario, opts);
  const outOfRange = optionProblems(scenario, options);
  if (outOfRange.length > 0) {
    io.err(`conclave sim: ${outOfRange.join('; ')} (scenario '${scenario.name}')`);
    return undefined;
  }
  const record = typeof opts['record'] === 'string' ? opts['record'] : undefined;
  if (record !== undefined && scenario.records !== true) {
    io.err(`conclave sim: --record: scenario '${scenario.name}' cannot be recorded yet ` +
      `(these can: ${[...SCENARIOS.values()].filter((s) => s.records === true)
        .map((s) => s.name).join(', ')})`);
    return undefined;
  }
  return { options, record };
}

/** Prints the run's summary (or its JSON); returns the number of violations. */
function printReport(io: CliIo, scenario: Scenario<unknown>, report: RunReport<unknown>,
  run: { options: ScenarioOptions; firstSeed: number; json: boolean; interrupted: boolean },
): number {
  const { options, firstSeed, json, interrupted } = run;
  const wallS = (report.wallMs ?? 0) / 1000;
  const speed = {
    seedsPerS: wallS > 0 ? report.results.length / wallS : undefined,
    eventsPerS: wallS > 0 ? report.events / wallS : undefined,
    simulatedSPerWallS: wallS > 0 ? report.simulatedMs / 1000 / wallS : undefined,
  };
  const violations = report.failures.length + report.summary.violations.length;
  if (json) {
    io.out(JSON.stringify({
      scenario: scenario.name, firstSeed, seeds: report.results.length, ok: violations === 0,
      results: report.results.map((r) => ({
        seed: r.seed, traceHash: r.traceHash, violations: r.violations,
      })),
      summary: report.summary.data, summaryViolations: report.summary.violations, speed,
    }));
    return violations;
  }
  for (const line of report.summary.lines) io.out(line);
  for (const v of report.summary.violations) io.out(`VIOLATION ${v.checker}: ${v.message}`);
  io.out(`speed: ${fmt(speed.seedsPerS)} seeds/s, ${fmt(speed.eventsPerS, 0)} events/s, ` +
    `${fmt(speed.simulatedSPerWallS, 0)} simulated s per wall s`);
  io.out(violations === 0
    ? `${interrupted ? 'partial (interrupted), ' : ''}ok: ${report.results.length} seeds, ` +
      'zero violations'
    : `FAILED: ${report.failures.length} of ${report.results.length} seeds broke an invariant`);
  if (violations === 0 && typeof options['mutant'] === 'string') {
    io.out(mutantEscapedNote(options['mutant'], scenario.mutantCatches?.[options['mutant']]));
  }
  return violations;
}

/**
 * Runs the seeds: over worker threads from the built CLI (so that Ctrl-C can stop them and
 * still print the partial summary and the replay command of each seed in progress), else in
 * this thread (a single seed, or from source), where Ctrl-C ends the process as usual.
 */
async function executeSeeds(scenario: Scenario<unknown>, run: Omit<ParallelRun, 'interrupted'>,
  jobs: number): Promise<RunReport<unknown> & { inProgress?: number[] }> {
  if (jobs === 0 || run.seedCount < 2) {
    return runSeeds(scenario, { ...run, wallClock: new SystemClock() });
  }
  const interrupt = interruptOnSigint();
  try {
    const report = await runSeedsInWorkers(scenario, { ...run, interrupted: interrupt.signal },
      jobs);
    if (interrupt.signal.aborted) return report;
    const { inProgress: _none, ...finished } = report;
    return finished;
  } finally {
    interrupt.dispose();
  }
}

/**
 * Worker threads to run on; 0: none, run in this thread. Workers load the compiled worker
 * module, so they only run from the built CLI (dist/).
 */
function jobCount(requested: unknown, seedCount: number): number {
  if (!import.meta.url.endsWith('.js')) return 0;
  return Math.max(1, Math.min(typeof requested === 'number' ? requested : availableParallelism(),
    seedCount));
}

interface ParallelRun {
  /** Aborted on Ctrl-C: the workers stop, the report covers the seeds done. */
  readonly interrupted: AbortSignal;
  readonly firstSeed: number;
  readonly seedCount: number;
  readonly options: ScenarioOptions;
  readonly stopOnFailure: boolean;
  readonly onSeed: (result: SeedResult<unknown>) => void;
  readonly onProgress: SeedProgressListener | undefined;
}

/** Runs the seeds over `jobs` worker threads; the report is the same as runSeeds' one. */
async function runSeedsInWorkers(scenario: Scenario<unknown>, run: ParallelRun,
  jobs: number): Promise<RunReport<unknown> & { inProgress: number[] }> {
  const clock = new SystemClock();
  const startMs = clock.monotonicMs();
  const results: SeedResult<unknown>[] = [];
  const workers: Worker[] = [];
  const stopAll = (): void => {
    for (const worker of workers) void worker.terminate();
  };
  /** Each job's seeds, and how many it reported: the next one is in progress. */
  const jobSeeds: { seeds: number[]; done: number; finished: boolean }[] = [];
  run.interrupted.addEventListener('abort', stopAll);
  const runs = Array.from({ length: jobs }, (_, job) => {
    const seeds: number[] = [];
    for (let i = job; i < run.seedCount; i += jobs) {
      seeds.push((run.firstSeed + i) % (SEED_MAX + 1));
    }
    const progress = { seeds, done: 0, finished: false };
    jobSeeds.push(progress);
    const worker = new Worker(new URL('../sim-worker.js', import.meta.url), {
      workerData: { scenario: scenario.name, seeds, options: run.options },
    });
    workers.push(worker);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.kind === 'done') {
          progress.finished = true;
          return resolve();
        }
        if (message.kind === 'progress') return run.onProgress?.(message.progress);
        progress.done++;
        results.push(message.result);
        run.onSeed(message.result);
        if (run.stopOnFailure && message.result.violations.length > 0) stopAll();
      });
      worker.on('error', reject);
      worker.on('exit', () => resolve());
    });
  });
  await Promise.all(runs);
  results.sort((a, b) => a.seed - b.seed);
  const failures = results.filter((r) => r.violations.length > 0);
  const inProgress = !run.interrupted.aborted ? [] : jobSeeds
    .filter((j) => !j.finished && j.done < j.seeds.length).map((j) => j.seeds[j.done]!);
  return {
    results, failures, inProgress,
    summary: scenario.summarize(results, run.options),
    wallMs: clock.monotonicMs() - startMs,
    simulatedMs: results.reduce((s, r) => s + r.simulatedMs, 0),
    events: results.reduce((s, r) => s + r.events, 0),
  };
}

type WorkerMessage =
  | { readonly kind: 'result'; readonly result: SeedResult<unknown> }
  | { readonly kind: 'progress'; readonly progress: SeedProgress }
  | { readonly kind: 'done' };

/** A long seed prints where it is at most this often (on stderr: stdout stays data). */
const PROGRESS_EVERY_MS = 10_000;

/**
 * Prints a line on stderr when a seed has run for a while without finishing, then at most
 * every PROGRESS_EVERY_MS, so a user of a 1,000-member run sees it move.
 */
function progressPrinter(io: CliIo): SeedProgressListener {
  const clock = new SystemClock();
  const startMs = clock.monotonicMs();
  const lastMs = new Map<number, number>();
  return (progress) => {
    const nowMs = clock.monotonicMs();
    if (nowMs - (lastMs.get(progress.seed) ?? startMs) < PROGRESS_EVERY_MS) return;
    lastMs.set(progress.seed, nowMs);
    const phase = progress.phase === undefined ? '' : `, ${progress.phase}`;
    io.err(`  seed ${progress.seed}: ${(progress.simulatedMs / 1000).toFixed(0)} simulated s, `
      + `${progress.events} events${phase} (${((nowMs - startMs) / 1000).toFixed(0)} s since `
      + 'the start)');
  };
}

function seedLine(result: SeedResult<unknown>): string {
  const count = result.violations.length;
  const verdict = count === 0 ? 'ok' : `FAIL (${count} violations)`;
  return `seed ${result.seed} trace ${result.traceHash} ${verdict} events ${result.events}`;
}

function printFailure(io: CliIo, scenario: Scenario<unknown>, result: SeedResult<unknown>,
  options: ScenarioOptions): void {
  for (const v of result.violations.slice(0, 10)) {
    io.out(`  VIOLATION ${v.checker} at ${v.atMs.toFixed(3)} ms: ${v.message}`);
  }
  if (result.violations.length > 10) io.out(`  ... and ${result.violations.length - 10} more`);
  io.out(`  drawn: ${JSON.stringify(result.drawn)}`);
  io.out(`  replay: ${replayCommand(scenario, result.seed, options)}`);
}

/**
 * One option per flag name. Scenarios may share a name with different choices (each has its own
 * `--mutant` list): the option accepts their union, and `optionProblems` then holds the value
 * to the chosen scenario's own choices and range.
 */
function allScenarioFlags(): ScenarioFlag[] {
  const byName = new Map<string, ScenarioFlag>();
  for (const scenario of SCENARIOS.values()) {
    for (const flag of scenario.flags) {
      const seen = byName.get(flag.name);
      if (seen === undefined) byName.set(flag.name, flag);
      else if (seen.choices !== undefined && flag.choices !== undefined) {
        const choices = [...new Set([...seen.choices, ...flag.choices])];
        byName.set(flag.name, { ...seen, choices });
      }
    }
  }
  return [...byName.values()];
}

/** Values outside the chosen scenario's own range or choices (shared options accept more). */
function optionProblems(scenario: Scenario<unknown>, options: ScenarioOptions): string[] {
  const problems: string[] = [];
  for (const flag of scenario.flags) {
    const value = options[flag.name];
    if (value === undefined || value === flag.defaultValue) continue;
    if (flag.choices !== undefined && !flag.choices.includes(String(value))) {
      problems.push(`--${flag.name} must be one of ${flag.choices.join(', ')}`);
    }
    if (typeof value === 'number' && ((flag.min !== undefined && value < flag.min)
      || (flag.max !== undefined && value > flag.max))) {
      problems.push(`--${flag.name} must be from ${flag.min ?? '-∞'} to ${flag.max ?? '∞'}`);
    }
  }
  return problems;
}

function optionFor(flag: ScenarioFlag): Option {
  const min = flag.min ?? -Number.MAX_SAFE_INTEGER;
  const max = flag.max ?? Number.MAX_SAFE_INTEGER;
  if (flag.kind === 'boolean') return new Option(`--${flag.name}`, flag.description);
  const option = new Option(`--${flag.name} <value>`, flag.description);
  if (flag.kind === 'integer') option.argParser(integerIn(min, max));
  if (flag.kind === 'number') option.argParser(numberIn(min, max));
  if (flag.choices !== undefined) option.choices(flag.choices);
  return option;
}

/** Flags given on the command line that the chosen scenario does not take. */
function foreignFlags(scenario: Scenario<unknown>, command: Command): string[] {
  const own = new Set(scenario.flags.map((f) => f.name));
  const common = new Set(['scenario', 'seed', 'seeds', 'stop-on-failure', 'quiet', 'json', 'jobs',
    'record']);
  return command.options
    .filter((o) => command.getOptionValueSource(o.attributeName()) === 'cli')
    .map((o) => o.long?.replace(/^--/, '') ?? '')
    .filter((name) => !own.has(name) && !common.has(name))
    .map((name) => `--${name}`);
}

function scenarioOptions(scenario: Scenario<unknown>,
  opts: Record<string, unknown>): ScenarioOptions {
  const options: Record<string, number | boolean | string | undefined> = {};
  for (const flag of scenario.flags) {
    const value = opts[camel(flag.name)];
    options[flag.name] = value === undefined ? flag.defaultValue
      : (value as number | boolean | string);
  }
  return options;
}

function scenarioHelp(): string {
  const lines = ['', 'Scenarios:'];
  for (const s of SCENARIOS.values()) {
    lines.push(`  ${s.name}: ${s.summary}`);
    for (const f of s.flags) {
      const def = f.defaultValue === undefined ? '' : ` (default: ${String(f.defaultValue)})`;
      lines.push(`      --${f.name}: ${f.description}${def}`);
    }
  }
  lines.push(...mutantHelp());
  lines.push('', 'Exit codes: 0 every checker held; 1 a violation (replay command printed); '
    + '2 usage error.');
  return lines.join('\n');
}

/**
 * The measured catching seeds of every mutant, once per table (the Raft scenarios share one),
 * headed by the scenarios that take those mutants.
 */
function mutantHelp(): string[] {
  const lines = ['', 'Mutants (TEST-ONLY --mutant): a mutant shows only on seeds whose faults '
    + 'reach its bug, so a run needs the seeds that catch it. Measured:'];
  const tables = new Map<Readonly<Record<string, MutantCatch>>, string[]>();
  for (const s of SCENARIOS.values()) {
    if (s.mutantCatches !== undefined) {
      tables.set(s.mutantCatches, [...tables.get(s.mutantCatches) ?? [], s.name]);
    }
  }
  for (const [table, names] of tables) {
    lines.push(`  ${names.join(', ')}:`);
    for (const line of mutantCatchLines(table)) lines.push(`    ${line}`);
  }
  return lines;
}

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function fmt(value: number | undefined, digits = 1): string {
  return value === undefined ? '-' : value.toFixed(digits);
}

/** Ctrl-C during a run: abort the workers (the partial summary follows) instead of dying. */
function interruptOnSigint(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSigint) };
}
