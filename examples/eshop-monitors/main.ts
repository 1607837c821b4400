/**
 * The scenario runner's command line:
 *
 *   npm run example:eshop -- --scenario failover|paused-leader --coordination core|etcd|gossip
 *                            [--repeat N] [--timeline]
 *
 * One run prints its timeline; with --repeat N it prints one line per run and the tally, and
 * exits 1 if any run broke a rule (a double restart, a stale order obeyed, no stale order shown,
 * a run that could not finish). Ctrl-C stops every process it started.
 */
import { parseArgs } from 'node:util';
import { SCENARIOS, RUNNING_GROUPS, runScenario, type ScenarioName, type ScenarioResult }
  from './scenarios.js';
import type { CoordinationMode } from './shop.js';
import { formatTimeline } from './timeline.js';

const USAGE = 'usage: npm run example:eshop -- --scenario failover|paused-leader '
  + '--coordination core|etcd|gossip [--repeat N] [--timeline]';

interface Tally {
  runs: number;
  restartedExactlyOnce: number;
  doubleRestarts: number;
  unneededRestarts: number;
  staleRejected: number;
  staleAccepted: number;
  failedRuns: number;
  detectedMs: number[];
  newLeaderMs: number[];
  restartedMs: number[];
}

function parseCommandLine(): { scenario: ScenarioName; coordination: CoordinationMode;
  repeat: number; timeline: boolean } {
  const { values } = parseArgs({ options: {
    scenario: { type: 'string' }, coordination: { type: 'string' },
    repeat: { type: 'string', default: '1' }, timeline: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  } });
  const problems: string[] = [];
  const scenario = values.scenario as ScenarioName;
  if (!SCENARIOS.includes(scenario)) problems.push(`--scenario: ${String(values.scenario)}`);
  const coordination = values.coordination as CoordinationMode;
  if (coordination !== 'core' && coordination !== 'etcd' && coordination !== 'gossip') {
    problems.push(`--coordination: ${String(values.coordination)}`);
  }
  const repeat = Number(values.repeat);
  if (!Number.isSafeInteger(repeat) || repeat < 1) problems.push(`--repeat: ${values.repeat}`);
  if (values.help === true || problems.length > 0) {
    process.stderr.write(`${problems.map((p) => `bad ${p}\n`).join('')}${USAGE}\n`);
    process.exit(values.help === true ? 0 : 2);
  }
  return { scenario, coordination, repeat, timeline: values.timeline === true || repeat === 1 };
}

function count(tally: Tally, result: ScenarioResult): void {
  tally.runs++;
  const checks = result.checks;
  if (result.error !== undefined || checks === undefined) tally.failedRuns++;
  if (checks === undefined) return;
  if (checks.restartsOfFailed === 1) tally.restartedExactlyOnce++;
  if (checks.restartsOfFailed > 1) tally.doubleRestarts++;
  tally.unneededRestarts += checks.unneededRestarts;
  tally.staleRejected += checks.staleRejected;
  tally.staleAccepted += checks.staleAccepted;
  const { detectedMs, newLeaderMs, restartedMs } = result.after;
  if (detectedMs !== undefined) tally.detectedMs.push(detectedMs);
  if (newLeaderMs !== undefined) tally.newLeaderMs.push(newLeaderMs);
  if (restartedMs !== undefined) tally.restartedMs.push(restartedMs);
}

function printRun(index: number, result: ScenarioResult, timeline: boolean): void {
  const ms = (value: number | undefined): string => (value === undefined ? '-' : `${value}`);
  const { detectedMs, newLeaderMs, restartedMs } = result.after;
  const head = `run ${index}: ${result.scenario} / ${result.coordination}: setup `
    + `${result.setupMs} ms; after the fault (ms): detected ${ms(detectedMs)}, new leader `
    + `${ms(newLeaderMs)}, ${result.failedService} restarted ${ms(restartedMs)}; `
    + `stale rejected ${result.checks?.staleRejected ?? 0}: `
    + `${result.violations.length === 0 ? 'OK' : `FAILED: ${result.violations.join('; ')}`}`;
  process.stdout.write(`${head}\n`);
  if (timeline || result.violations.length > 0) {
    for (const line of formatTimeline(result.events, result.startAtMs, result.endAtMs)) {
      process.stdout.write(`  ${line}\n`);
    }
  }
}

/** `min / median / max` of some durations. */
function spread(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return '-';
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  return `min ${sorted[0]}, median ${median}, max ${sorted[sorted.length - 1]}`;
}

function printTally(tally: Tally): void {
  process.stdout.write([
    `runs: ${tally.runs}`,
    `failed service restarted exactly once: ${tally.restartedExactlyOnce}`,
    `double restarts: ${tally.doubleRestarts}`,
    `restarts of healthy services: ${tally.unneededRestarts}`,
    `stale orders rejected: ${tally.staleRejected}`,
    `stale orders accepted: ${tally.staleAccepted}`,
    `runs that could not finish: ${tally.failedRuns}`,
    `fault -> failure detected (ms): ${spread(tally.detectedMs)}`,
    `fault -> new leader (ms): ${spread(tally.newLeaderMs)}`,
    `fault -> restart done (ms): ${spread(tally.restartedMs)}`,
  ].join('\n') + '\n');
}

async function main(): Promise<number> {
  const { scenario, coordination, repeat, timeline } = parseCommandLine();
  const stop = new AbortController();
  const onSignal = (): void => {
    process.stderr.write('stopping every process of the run...\n');
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Last resort if the runner dies another way: no process of the run outlives it.
  process.on('exit', () => {
    for (const group of RUNNING_GROUPS) group.killAllNow();
  });
  const tally: Tally = { runs: 0, restartedExactlyOnce: 0, doubleRestarts: 0,
    unneededRestarts: 0, staleRejected: 0, staleAccepted: 0, failedRuns: 0, detectedMs: [],
    newLeaderMs: [], restartedMs: [] };
  let violations = 0;
  for (let i = 1; i <= repeat && !stop.signal.aborted; i++) {
    const result = await runScenario({ scenario, coordination, signal: stop.signal });
    count(tally, result);
    if (result.violations.length > 0) violations++;
    printRun(i, result, timeline);
  }
  if (stop.signal.aborted) return 130;
  printTally(tally);
  return violations === 0 ? 0 : 1;
}

main().then((code) => {
  process.exitCode = code;
}, (error: unknown) => {
  process.stderr.write(`eshop: ${error instanceof Error ? error.stack : String(error)}\n`);
  for (const group of RUNNING_GROUPS) group.killAllNow();
  process.exitCode = 1;
});
