/**
 * Goal: in scenario `lease`, elections and locks hold every checker on the correct code while
 * doing real work (handovers, fenced writes, client freezes and cuts); with `--timing-violated`
 * holders frozen past their TTL do overlap (counted, not failures), `held()` checked right before
 * each write says false after such a freeze (so no write goes out under the stale token), and
 * the fence accepts no stale write; a seed replays exactly in both modes, and the replay
 * command carries the new flags.
 * Method: whole seeds of `runLeaseSeed`; sums of the recipe figures over each batch.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayCommand } from '../../../../src/sim/runner.js';
import {
  leaseScenario, runLeaseSeed, type RecipeFigures,
} from '../../../../src/sim/scenarios/lease/index.js';
import type { Scenario, ScenarioOptions, SeedResult } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 3, clients: 2, 'safety-s': 10, mutant: undefined };

async function runBatch(options: ScenarioOptions, firstSeed: number, count: number):
  Promise<(f: (r: RecipeFigures) => number) => number> {
  const results: SeedResult<{ recipes: RecipeFigures }>[] = [];
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
  return (f) => results.reduce((s, r) => s + f(r.figures.recipes), 0);
}

describe('sim: scenarios: lease: elections and locks', () => {
  test('10 seeds hold every checker, with handovers, fenced writes, freezes and cuts',
    async () => {
    const sum = await runBatch(OPTIONS, 300, 10);
    assert.ok(sum((f) => f.checks.handovers) >= 10, 'too few handovers');
    assert.ok(sum((f) => f.checks.writesAccepted) >= 200, 'too few writes');
    assert.ok(sum((f) => f.workload.holdingEnds.released) > 0, 'nobody resigned');
    assert.ok(sum((f) => f.workload.holdingEnds['lease-ended']) > 0, 'no lease ran out');
    assert.ok(sum((f) => f.clientPauses) > 10, 'too few client freezes');
    assert.ok(sum((f) => f.clientCuts) > 0, 'no client cut off');
    assert.equal(sum((f) => f.checks.overlaps), 0);
    assert.equal(sum((f) => f.checks.staleAccepted), 0);
  });

  test('--timing-violated: overlaps happen; held() stops stale writes; the fence accepts none',
    async () => {
      const sum = await runBatch({ ...OPTIONS, 'timing-violated': true }, 500, 8);
      assert.ok(sum((f) => f.checks.overlaps) > 0, 'no overlap: the violation did not bite');
      assert.ok(sum((f) => f.workload.holdingEnds.stalled) > 0, 'no stall verdict ended one');
      assert.ok(sum((f) => f.workload.freezesBeforeWrite) > 0, 'no freeze before a write');
      assert.ok(sum((f) => f.held.refused) > 0, 'held() never said false before a write');
      assert.equal(sum((f) => f.checks.staleAccepted), 0);
    });

  test('the same seed gives the same trace hash and figures, in both modes', async () => {
    for (const options of [OPTIONS, { ...OPTIONS, 'timing-violated': true }]) {
      const a = await runLeaseSeed(9, options);
      const b = await runLeaseSeed(9, options);
      assert.equal(a.traceHash, b.traceHash);
      assert.deepEqual(a.figures, b.figures);
    }
    assert.notEqual((await runLeaseSeed(9, { ...OPTIONS, 'recipe-clients': 5 })).traceHash,
      (await runLeaseSeed(9, { ...OPTIONS, 'recipe-clients': 4 })).traceHash);
  });

  test('a replay command carries --recipe-clients and --timing-violated', () => {
    assert.equal(replayCommand(leaseScenario as Scenario<unknown>, 3,
      { ...OPTIONS, clients: 6, 'recipe-clients': 5, 'timing-violated': true }),
    'npx conclave sim --scenario lease --seed 3 --seeds 1 --recipe-clients 5 --timing-violated');
  });
});
