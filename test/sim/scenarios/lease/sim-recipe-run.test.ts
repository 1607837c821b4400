/**
 * Goal: the simulated election driver takes the recipe's decisions as the real client does, and
 * the overlap checker bites on the shape the mutant `claimWithoutLeaseRecheck` opens: a second
 * candidate waits on the first and leads after it resigns, with a larger token and the next
 * term; a holder frozen past its margin ends its leadership as `stalled` the moment it runs
 * again; a waiter cut off from the cluster past its TTL loses its campaign, but with the mutant
 * it takes leadership when its predecessor's deletion reaches it, beside the rightful leader.
 * Method: a quiet LeaseWorld (3 members, no nemesis) with election clients driven run by run in
 * virtual time, their leaderships fed to a RecipeChecker.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recipeKeys, type CampaignMutant } from '../../../../src/core/election/index.js';
import { Prng } from '../../../../src/sim/prng.js';
import { Scheduler } from '../../../../src/sim/scheduler.js';
import { TraceHash } from '../../../../src/sim/trace-hash.js';
import { LeaseChecker } from '../../../../src/sim/scenarios/lease/lease-checker.js';
import {
  drawLeaseSettings, RECIPE_MARGIN_MS, type LeaseSettings,
} from '../../../../src/sim/scenarios/lease/lease-settings.js';
import { LeaseWorld } from '../../../../src/sim/scenarios/lease/lease-world.js';
import {
  RecipeChecker, type Leadership,
} from '../../../../src/sim/scenarios/lease/recipe-checker.js';
import {
  SimRecipeRun, type RecipeEndReason,
} from '../../../../src/sim/scenarios/lease/sim-recipe-run.js';

interface Fixture {
  readonly world: LeaseWorld;
  readonly settings: LeaseSettings;
  readonly checker: RecipeChecker;
}

interface Candidate {
  readonly run: SimRecipeRun;
  leadership: Leadership | undefined;
  end: { reason: RecipeEndReason; atMs: number } | undefined;
}

function quietWorld(seed: number): Fixture {
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const settings = drawLeaseSettings(prng,
    { nodes: 3, clients: 1, 'safety-s': 10, 'recipe-clients': 3, mutant: undefined });
  const leases = new LeaseChecker(() => scheduler.nowMs, settings.timing, () => -Infinity);
  const world = new LeaseWorld(prng.fork(), scheduler, new TraceHash(), settings, leases);
  scheduler.runUntil(5_000, () => world.leader() !== undefined);
  assert.ok(world.leader() !== undefined, 'no leader in 5 s');
  return { world, settings, checker: new RecipeChecker(() => scheduler.nowMs, false) };
}

/** Client `index` campaigns for election `leader` at the shortest recipe TTL. */
function campaign(f: Fixture, index: number, mutants: readonly CampaignMutant[] = []):
  Candidate {
  const { client } = f.world.recipeClients[index]!;
  const { tuning, recipes } = f.settings;
  const candidate: Candidate = { leadership: undefined, end: undefined, run: new SimRecipeRun(
    client, { keys: recipeKeys('election', 'leader'), value: client.id, ttlMs: recipes.ttlMsMin,
      clockRateErrorMax: tuning.clockRateErrorMax, marginMs: RECIPE_MARGIN_MS,
      watchTimeoutMs: 4 * tuning.electionTimeoutMsMax, retryDelayMs: tuning.heartbeatIntervalMs,
      mutants }, {
      granted: () => undefined,
      stalled: () => undefined,
      elected: (_run, action) => {
        candidate.leadership = f.checker.began('election/leader', client.id,
          action.fencingToken, action.term);
      },
      ended: (_run, reason) => {
        candidate.end = { reason, atMs: f.world.scheduler.nowMs };
        if (candidate.leadership !== undefined) f.checker.ended(candidate.leadership);
      },
    }) };
  candidate.run.start();
  return candidate;
}

function runUntil(f: Fixture, forMs: number, done: () => boolean, what: string): void {
  const { scheduler } = f.world;
  scheduler.runUntil(scheduler.nowMs + forMs, done);
  assert.ok(done(), `${what}: not within ${forMs} ms`);
}

/** A leads, B waits on A, C waits on B; B is cut off for 3 TTLs, A resigns meanwhile. */
function waiterCutOff(mutants: readonly CampaignMutant[]):
  { f: Fixture; b: Candidate; c: Candidate } {
  const f = quietWorld(21);
  const ttlMs = f.settings.recipes.ttlMsMin;
  const a = campaign(f, 0);
  runUntil(f, 2_000, () => a.run.holding, 'A elected');
  const b = campaign(f, 1, mutants);
  runUntil(f, 2_000, () => b.run.phase === 'waiting', 'B waiting');
  const c = campaign(f, 2);
  runUntil(f, 2_000, () => c.run.phase === 'waiting', 'C waiting');
  const cutEndMs = f.world.scheduler.nowMs + 3 * ttlMs;
  f.world.recipeClients[1]!.host.cut(3 * ttlMs);
  const store = (): ReturnType<LeaseWorld['leader']> => f.world.leader();
  const leaseB = b.run.keeper.leaseId!;
  runUntil(f, 2 * ttlMs, () => store()?.process?.core.store.lease(leaseB) === undefined,
    'B\'s lease expired at the servers');
  f.world.scheduler.runUntil(f.world.scheduler.nowMs + 200); // C scans again: waits on A
  a.run.release('resigned');
  runUntil(f, 1_000, () => c.run.holding, 'C elected after A resigned');
  const watchTimeoutMs = 4 * f.settings.tuning.electionTimeoutMsMax;
  f.world.scheduler.runUntil(cutEndMs + 2 * watchTimeoutMs,
    () => b.run.over || b.run.holding);
  return { f, b, c };
}

describe('sim: scenarios: lease: SimRecipeRun', () => {
  test('the next candidate waits on its predecessor, then leads with a larger token and term',
    () => {
      const f = quietWorld(11);
      const a = campaign(f, 0);
      runUntil(f, 2_000, () => a.run.holding, 'A elected');
      const b = campaign(f, 1);
      runUntil(f, 2_000, () => b.run.phase === 'waiting', 'B waiting');
      // Kept alive at TTL/3, A holds through three TTLs; B waits all along.
      f.world.scheduler.runUntil(f.world.scheduler.nowMs + 3 * f.settings.recipes.ttlMsMin);
      assert.equal(a.run.holding, true, `A lost: ${JSON.stringify(a.end)}`);
      assert.equal(b.run.phase, 'waiting');
      const resignedAtMs = f.world.scheduler.nowMs;
      a.run.release('resigned');
      assert.deepEqual(a.end, { reason: 'released', atMs: resignedAtMs });
      runUntil(f, 1_000, () => b.run.holding, 'B elected after A resigned');
      const handoverMs = f.world.scheduler.nowMs - resignedAtMs;
      assert.ok(handoverMs < 200, `handover took ${handoverMs} ms`);
      assert.ok(b.leadership!.fencingToken > a.leadership!.fencingToken);
      assert.equal(b.leadership!.term, a.leadership!.term + 1);
      assert.deepEqual(f.checker.violations, []);
      assert.equal(f.checker.counts.handovers, 1);
    });

  test('a holder frozen past its margin ends as stalled the moment it runs again', () => {
    const f = quietWorld(12);
    const a = campaign(f, 0);
    runUntil(f, 2_000, () => a.run.holding, 'A elected');
    const frozeAtMs = f.world.scheduler.nowMs;
    f.world.recipeClients[0]!.host.pause(RECIPE_MARGIN_MS + 300);
    f.world.scheduler.runUntil(frozeAtMs + RECIPE_MARGIN_MS + 299);
    assert.equal(a.run.holding, true, 'a frozen holder cannot know');
    f.world.scheduler.runUntil(frozeAtMs + RECIPE_MARGIN_MS + 301);
    assert.deepEqual(a.end, { reason: 'stalled', atMs: frozeAtMs + RECIPE_MARGIN_MS + 300 });
    const leaseA = a.run.keeper.leaseId!;
    runUntil(f, 1_000, () => f.world.leader()?.process?.core.store.lease(leaseA) === undefined,
      'the stalled holder revoked its lease');
  });

  test('a waiter cut off past its TTL loses its campaign; no two holders at once', () => {
    const { f, b, c } = waiterCutOff([]);
    assert.equal(b.end?.reason, 'lease-ended');
    assert.equal(b.leadership, undefined);
    assert.equal(c.run.holding, true);
    assert.deepEqual(f.checker.violations, []);
  });

  test('claimWithoutLeaseRecheck: the cut-off waiter leads beside the rightful leader', () => {
    const { f, b, c } = waiterCutOff(['claimWithoutLeaseRecheck']);
    assert.ok(b.leadership !== undefined, `B never led: ${JSON.stringify(b.end)}`);
    assert.equal(c.run.holding || c.end !== undefined, true);
    assert.ok(f.checker.violations.some((v) => v.checker === 'no-overlap'),
      JSON.stringify(f.checker.violations));
  });
});
