/**
 * sim: golden trace hashes — a few fixed seeds of every scenario must replay to the trace hashes
 * checked in beside this file (golden-hashes.json). The determinism tests compare two runs in one
 * process, which cannot see a change that moves both runs alike (a new PRNG draw, a reordered
 * event, a changed default); a pinned hash sees every one.
 *
 * A change to the simulator, a scenario, or the code it runs that changes these runs on
 * purpose updates the hashes ON PURPOSE, IN THE SAME COMMIT, and says so in the commit message:
 *
 *   CONCLAVE_GOLDEN=update node scripts/run-tests.mjs test/sim/golden-hashes.test.ts
 *
 * rewrites golden-hashes.json; review its diff like code. A change that was meant to keep every
 * run as it was (a refactor, a reformat) must leave the file untouched. docs/simulation.md says
 * the same.
 *
 * And across processes: the same seed run by two separate `conclave sim` processes (with a
 * different time zone, locale and heap size each, which a deterministic run must not notice)
 * prints the same pinned hash.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SCENARIOS } from '../../src/sim/scenarios/index.js';
import type { ScenarioOptions } from '../../src/sim/scenario.js';

const GOLDEN_FILE = fileURLToPath(new URL('./golden-hashes.json', import.meta.url));
const CLI = fileURLToPath(new URL('../cli/conclave-from-source.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const UPDATE = process.env['CONCLAVE_GOLDEN'] === 'update';
export const GOLDEN_SEEDS: readonly number[] = [1, 2, 3];

/** Per scenario, the options over its defaults: short runs that still exercise every part. */
export const GOLDEN_CASES: Readonly<Record<string, ScenarioOptions>> = {
  'heartbeat': { 'duration-s': 30 },
  'raft': { 'safety-s': 3, 'liveness-s': 5, clients: 2 },
  'raft-partial-partition': { 'partition-s': 20 },
  'raft-figure8': {},
  'raft-ack-crash': {},
  'raft-vote-restart': {},
  'gossip': { members: 8 },
  'lease': { clients: 3, 'safety-s': 3 },
  'core': { 'safety-s': 3 },
};

/** A scenario's options: every flag at its default, then `overrides`. */
export function optionsOf(name: string, overrides: ScenarioOptions): ScenarioOptions {
  const scenario = SCENARIOS.get(name);
  assert.ok(scenario !== undefined, `no scenario ${name}`);
  const options: Record<string, number | boolean | string | undefined> = {};
  for (const flag of scenario.flags) options[flag.name] = flag.defaultValue;
  return { ...options, ...overrides };
}

type Golden = Record<string, Record<string, string>>;

describe('sim: golden trace hashes', () => {
  test('every scenario is pinned (a new scenario adds its case here)', () => {
    assert.deepEqual(Object.keys(GOLDEN_CASES).sort(), [...SCENARIOS.keys()].sort());
  });

  test('fixed seeds of every scenario replay to the checked-in trace hashes', async () => {
    const found: Golden = {};
    for (const [name, overrides] of Object.entries(GOLDEN_CASES)) {
      const scenario = SCENARIOS.get(name)!;
      const options = optionsOf(name, overrides);
      found[name] = {};
      for (const seed of GOLDEN_SEEDS) {
        found[name][String(seed)] = (await scenario.runSeed(seed, options)).traceHash;
      }
    }
    if (UPDATE) writeFileSync(GOLDEN_FILE, `${JSON.stringify(found, undefined, 2)}\n`);
    const pinned = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as Golden;
    assert.deepEqual(found, pinned, 'a run changed: if on purpose, update golden-hashes.json in '
      + 'the same commit (CONCLAVE_GOLDEN=update, see the top of this file)');
  });

  test('one seed run in two separate processes prints the same pinned hash in both', async () => {
    const pinned = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as Golden;
    const run = async (env: Record<string, string>, heapMb: number): Promise<string> => {
      const { stdout } = await promisify(execFile)(process.execPath, [
        `--max-old-space-size=${heapMb}`, '--import', 'tsx', CLI, 'sim', '--scenario', 'raft',
        '--seed', '2', '--seeds', '1', '--safety-s', '3', '--liveness-s', '5', '--clients', '2',
        '--json',
      ], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 300_000 });
      const report = JSON.parse(stdout) as { results: { traceHash: string }[] };
      return report.results[0]!.traceHash;
    };
    const [a, b] = await Promise.all([
      run({ TZ: 'UTC', LC_ALL: 'C' }, 512),
      run({ TZ: 'Pacific/Chatham', LC_ALL: 'de_DE.UTF-8' }, 1024),
    ]);
    assert.equal(a, b, 'two processes, one seed, two trace hashes');
    assert.equal(a, pinned['raft']?.['2'], 'the processes agree with each other, not with the pin');
  });
});
