/**
 * Goal: scenario `core` holds every checker on the correct code (the real ConsistentCore on 5
 * simulated members with snapshots, the shipped client, the full nemesis) while doing real
 * work: a KV history of puts, deletes, cas and reads checked `ok` by the WGL checker, watchers
 * compared event for event with the store after resuming, leases granted and ended, snapshots
 * taken and installed, stale-leader faults on every seed; a seed replays exactly; it is registered with a replay command.
 * Method: whole seeds of `runCoreSeed` at the scenario's defaults; a failure message carries
 * each seed's replay command.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayCommand } from '../../../../src/sim/runner.js';
import {
  coreScenario, runCoreSeed, type CoreFigures,
} from '../../../../src/sim/scenarios/core/index.js';
import { SCENARIOS } from '../../../../src/sim/scenarios/index.js';
import type { Scenario, ScenarioOptions, SeedResult } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 5, 'kv-clients': 4, readers: 1, 'lease-clients': 2,
  watchers: 3, 'safety-s': 10 };

async function runBatch(seeds: readonly number[]): Promise<SeedResult<CoreFigures>[]> {
  const results: SeedResult<CoreFigures>[] = [];
  const failures: string[] = [];
  for (const seed of seeds) {
    const result = await runCoreSeed(seed, OPTIONS);
    results.push(result);
    const first = result.violations[0];
    if (first === undefined) continue;
    failures.push(`seed ${seed}: ${first.checker}: ${first.message.slice(0, 2_000)}\n  replay: `
      + replayCommand(coreScenario as Scenario<unknown>, seed, OPTIONS));
  }
  assert.deepEqual(failures, []);
  return results;
}

describe('sim: scenarios: core', () => {
  test('3 seeds hold every checker, with every part exercised', async () => {
    const results = await runBatch([1, 2, 3]);
    const sum = (f: (x: CoreFigures) => number): number =>
      results.reduce((s, r) => s + f(r.figures), 0);
    for (const r of results) assert.equal(r.figures.linearizability, 'ok', `seed ${r.seed}`);
    // The work must be real, or the checks above prove nothing.
    assert.ok(sum((f) => f.kv.ok) >= 3 * 300, 'too few kv calls answered');
    assert.ok(sum((f) => f.kv.cas) >= 3 * 50, 'too few compare-and-swaps');
    assert.ok(sum((f) => f.kv.serializableReads) >= 3 * 20, 'too few serializable reads');
    assert.ok(sum((f) => f.watches.compared) === 3 * 3, 'watchers not all compared');
    assert.ok(sum((f) => f.watches.resumes) >= 3 * 5, 'too few watch resumes');
    assert.ok(sum((f) => f.leases.granted) >= 3 * 3, 'too few leases');
    assert.ok(sum((f) => f.snapshots.taken) >= 3 * 10, 'too few snapshots');
    assert.ok(sum((f) => f.snapshots.installed) > 0, 'no InstallSnapshot');
    assert.ok(sum((f) => f.crashes + f.partitions + f.pauses) > 3, 'too few faults');
    // Every seed cuts a leader off while the readers still reach it (nemesis.ts), and the
    // correct code's ReadIndex keeps their reads linearizable (the histories above are ok).
    for (const r of results) {
      assert.ok(r.figures.staleLeaders > 0, `seed ${r.seed}: no stale-leader fault`);
    }
  });

  test('a seed replays to the same trace hash', async () => {
    const a = await runCoreSeed(3, OPTIONS);
    const b = await runCoreSeed(3, OPTIONS);
    assert.equal(a.traceHash, b.traceHash);
  });

  test('is registered for conclave sim, with a replay command', () => {
    assert.equal(SCENARIOS.get('core'), coreScenario);
    assert.match(replayCommand(coreScenario as Scenario<unknown>, 7, OPTIONS),
      /--scenario core .*--seed 7/);
  });
});
