/**
 * sim: mutant catches — every scenario that takes `--mutant` has a measured entry for each of
 * its mutants (the `mutantCatches` tables beside the mutant names), every entry names a real
 * scenario and flags it takes, and the first seed of each entry still breaks an invariant by
 * the checker the entry names; `conclave sim` prints the table in its help and the entry in the
 * note of a run that planted a mutant and passed.
 * Method: each entry's first catching seed run through its scenario's own runSeed, with the
 * scenario's defaults and the entry's flags (what the printed command runs).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { flagText, mutantCatchCommand } from '../../src/sim/mutant-catches.js';
import type { MutantCatch, Scenario, ScenarioOptions } from '../../src/sim/scenario.js';
import { SCENARIOS } from '../../src/sim/scenarios/index.js';
import { runCliInProcess } from '../cli/run-in-process.js';

function mutantChoices(scenario: Scenario<unknown>): readonly string[] | undefined {
  return scenario.flags.find((f) => f.name === 'mutant')?.choices;
}

/** Every distinct table once, with one scenario that uses it. */
function tables(): [Readonly<Record<string, MutantCatch>>, Scenario<unknown>][] {
  const seen = new Map<Readonly<Record<string, MutantCatch>>, Scenario<unknown>>();
  for (const s of SCENARIOS.values()) {
    if (s.mutantCatches !== undefined && !seen.has(s.mutantCatches)) seen.set(s.mutantCatches, s);
  }
  return [...seen];
}

function optionsOf(scenario: Scenario<unknown>, extra: ScenarioOptions): ScenarioOptions {
  const options: Record<string, number | boolean | string | undefined> = {};
  for (const flag of scenario.flags) options[flag.name] = flag.defaultValue;
  return { ...options, ...extra };
}

describe('sim: mutant catches', () => {
  test('every scenario with --mutant has an entry for each of its mutants', () => {
    let scenarios = 0;
    for (const scenario of SCENARIOS.values()) {
      const choices = mutantChoices(scenario);
      if (choices === undefined) continue;
      scenarios++;
      assert.ok(scenario.mutantCatches !== undefined, `${scenario.name}: no mutantCatches`);
      assert.deepEqual(Object.keys(scenario.mutantCatches).sort(), [...choices].sort(),
        scenario.name);
    }
    assert.ok(scenarios >= 8, `${scenarios} scenarios take --mutant`);
  });

  test('every entry names a scenario that takes the mutant and the entry\'s flags', () => {
    for (const [table] of tables()) {
      for (const [mutant, where] of Object.entries(table)) {
        const scenario = SCENARIOS.get(where.scenario);
        assert.ok(scenario !== undefined, `${mutant}: no scenario ${where.scenario}`);
        assert.ok(mutantChoices(scenario)?.includes(mutant), `${mutant}: not in ${where.scenario}`);
        const names = new Set(scenario.flags.map((f) => f.name));
        for (const flag of Object.keys(where.flags)) {
          assert.ok(names.has(flag), `${mutant}: ${where.scenario} has no --${flag}`);
        }
        for (const seed of where.caughtOn) {
          assert.ok(seed >= where.first && seed < where.first + where.count, `${mutant}: ${seed}`);
        }
      }
    }
  });

  for (const [table] of tables()) {
    for (const [mutant, where] of Object.entries(table)) {
      const seed = where.caughtOn[0];
      if (seed === undefined) continue;
      test(`${mutant}: ${mutantCatchCommand(mutant, where)} fails by ${where.checker}`,
        async () => {
          const scenario = SCENARIOS.get(where.scenario)!;
          const result = await scenario.runSeed(seed,
            optionsOf(scenario, { ...where.flags, mutant }));
          assert.equal(result.violations[0]?.checker, where.checker,
            JSON.stringify(result.violations.slice(0, 3)));
        });
    }
  }

  test('sim --help says a mutant needs the seeds that catch it, and lists them', async () => {
    const r = await runCliInProcess(['sim', '--help']);
    assert.equal(r.code, 0);
    const help = r.out.join('\n');
    assert.match(help, /A mutant needs the seeds that catch it/);
    assert.doesNotMatch(help, /the run must fail/);
    for (const [table] of tables()) {
      for (const mutant of Object.keys(table)) assert.match(help, new RegExp(`\\b${mutant}: `));
    }
    assert.match(help,
      /voteNotPersisted: seeds 2, 3, 6, 8 of 1–20 of --scenario raft-vote-restart/);
  });

  test('a planted mutant that no seed exposed: exit 0, and the note prints its catching seeds',
    async () => {
      for (const [scenario, mutant] of [['raft-vote-restart', 'voteNotPersisted'],
        ['lease', 'ttlResetOnElection'], ['gossip', 'deadWithoutSuspicion']] as const) {
        const where = SCENARIOS.get(scenario)!.mutantCatches![mutant]!;
        const missed = seedOutside(where);
        const extra = flagText(where.flags).split(' ').filter((w) => w !== '');
        const r = await runCliInProcess(['sim', '--scenario', scenario, '--seed', String(missed),
          '--mutant', mutant, ...extra]);
        const out = r.out.join('\n');
        assert.equal(r.code, 0, `${scenario} seed ${missed}: ${out}`);
        assert.ok(out.includes(`note: mutant ${mutant} was planted but no seed of this run `
          + 'exposed it; a mutant needs the seeds that catch it'), out);
        assert.ok(out.includes(`run: ${mutantCatchCommand(mutant, where)}`), out);
      }
    });
});

/** A seed of the measured range that did not catch the mutant. */
function seedOutside(where: MutantCatch): number {
  for (let seed = where.first; seed < where.first + where.count; seed++) {
    if (!where.caughtOn.includes(seed)) return seed;
  }
  assert.fail('every seed of the range catches it');
}
