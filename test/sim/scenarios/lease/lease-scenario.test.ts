/**
 * Goal: scenario `lease` holds every checker on the correct code over a batch of seeds (3 and 5
 * members, and with `--snapshots`) while doing real work (leases granted, kept alive, ended,
 * both bounds checked; snapshots taken, installed and compared), a seed replays exactly, and
 * it is registered for `conclave sim` with a replay command.
 * Method: whole seeds of `runLeaseSeed`; a failure message carries each seed's replay command.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayCommand } from '../../../../src/sim/runner.js';
import {
  leaseScenario, runLeaseSeed, type LeaseFigures,
} from '../../../../src/sim/scenarios/lease/index.js';
import { SCENARIOS } from '../../../../src/sim/scenarios/index.js';
import type { Scenario, ScenarioOptions, SeedResult } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 3, clients: 6, 'safety-s': 10, mutant: undefined };

async function runBatch(options: ScenarioOptions, firstSeed: number, count: number):
  Promise<SeedResult<LeaseFigures>[]> {
  const results: SeedResult<LeaseFigures>[] = [];
  const failures: string[] = [];
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const result = await runLeaseSeed(seed, options);
    results.push(result);
    const first = result.violations[0];
    if (first === undefined) continue;
    failures.push(`seed ${seed}: ${first.checker}: ${first.message}\n  replay: `
      + replayCommand(leaseScenario as Scenario<unknown>, seed, options));
  }
  assert.deepEqual(failures, []);
  return results;
}

describe('sim: scenarios: lease', () => {
  test('12 seeds of 3 members hold every checker, with every bound exercised', async () => {
    const results = await runBatch(OPTIONS, 100, 12);
    const sum = (f: (x: LeaseFigures) => number): number =>
      results.reduce((s, r) => s + f(r.figures), 0);
    // The work must be real, or the checks above prove nothing.
    assert.ok(sum((f) => f.leases.granted) >= 12 * 10, 'too few leases');
    assert.ok(sum((f) => f.leases.keepAlivesAcked) >= 12 * 20, 'too few keep-alives');
    assert.ok(sum((f) => f.slack.neverEarlierChecked) >= 12 * 3, 'never-earlier rarely checked');
    assert.ok(sum((f) => f.slack.holderChecked) >= 12 * 3, 'holder deadline rarely checked');
    assert.ok(sum((f) => f.slack.upperQuietChecked) > 0, 'no fault-free upper-bound check');
    assert.ok(sum((f) => f.slack.upperHealChecked) > 0, 'no upper-bound check after the heal');
    assert.ok(sum((f) => f.leaderChanges) > 12, 'too few leader changes');
    assert.ok(sum((f) => f.crashes + f.partitions + f.pauses) > 12, 'too few faults');
  });

  test('4 seeds of 5 members hold every checker', async () => {
    await runBatch({ ...OPTIONS, nodes: 5 }, 200, 4);
  });

  test('6 seeds with --snapshots hold every checker, snapshots installed and compared',
    async () => {
    const results = await runBatch({ ...OPTIONS, snapshots: true }, 300, 6);
    const sum = (f: (x: LeaseFigures) => number): number =>
      results.reduce((s, r) => s + f(r.figures), 0);
    assert.ok(sum((f) => f.snapshots.taken) >= 6 * 5, 'too few snapshots');
    assert.ok(sum((f) => f.snapshots.installed) > 0, 'no InstallSnapshot');
    assert.ok(sum((f) => f.snapshots.compared) >= 6 * 3, 'too few snapshots compared');
  });

  test('the same seed gives the same trace hash and figures; another seed another hash',
    async () => {
    const a = await runLeaseSeed(7, OPTIONS);
    const b = await runLeaseSeed(7, OPTIONS);
    assert.equal(a.traceHash, b.traceHash);
    assert.deepEqual(a.figures, b.figures);
    assert.equal(a.events, b.events);
    assert.notEqual((await runLeaseSeed(8, OPTIONS)).traceHash, a.traceHash);
  });

  test('conclave sim knows it; a failing seed replays with its flags', () => {
    assert.equal(SCENARIOS.get('lease'), leaseScenario);
    assert.equal(replayCommand(leaseScenario as Scenario<unknown>, 12, { ...OPTIONS, nodes: 5,
      mutant: 'ttlResetOnElection' }),
    'npx conclave sim --scenario lease --seed 12 --seeds 1 --nodes 5 --mutant ttlResetOnElection');
  });
});
