/**
 * sim: scenarios: gossip — SWIM with Lifeguard and the emergent leader under the script.
 * Goal: a seed is reproducible; every checker holds on small clusters under the swarm, for each
 * split-brain strategy; every seed yields the three leader-event figures and crash samples; the
 * checkers bite (a misconfigured probe period and suspicion timeout kill live members; without
 * reconnects a healed partition never merges); the summary compares Lifeguard on and off.
 * Method: short runs of `runGossipSeed` on 12–16 members with test-only config overrides.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  gossipScenario, runGossipSeed, type GossipFigures,
} from '../../../../src/sim/scenarios/gossip/index.js';
import { SCENARIOS } from '../../../../src/sim/scenarios/index.js';
import type { ScenarioOptions, SeedResult } from '../../../../src/sim/scenario.js';

const SMALL: ScenarioOptions = {
  members: 16, loss: undefined, 'duration-s': undefined, lifeguard: 'both',
  strategy: 'keep-majority', profile: 'local',
};

function assertFigures(result: SeedResult<GossipFigures>): void {
  for (const run of result.figures.runs) {
    const kinds = run.agreements.filter((a) => a.settledMs !== undefined).map((a) => a.kind);
    for (const kind of ['coordinator-crash', 'partition-heal', 'coordinator-leave'] as const) {
      assert.ok(kinds.includes(kind), `seed ${result.seed}: no ${kind} figure: ${kinds.join()}`);
    }
    const complete = run.crashes.filter((c) => c.fullMs !== undefined);
    assert.ok(complete.length >= 2, `seed ${result.seed}: ${complete.length} complete crashes`);
    assert.ok(complete.some((c) => c.coordinator), 'the coordinator crash is a sample too');
    assert.equal(run.invalidMessages, 0);
  }
}

describe('sim: scenarios: gossip', () => {
  test('the same seed gives the same trace hash and figures; another seed another hash', () => {
    const options = { ...SMALL, members: 12, lifeguard: 'on', loss: 0.01 };
    const a = runGossipSeed(5, options);
    const b = runGossipSeed(5, options);
    assert.equal(a.traceHash, b.traceHash);
    assert.deepEqual(a.figures, b.figures);
    assert.notEqual(runGossipSeed(6, options).traceHash, a.traceHash);
  });

  test('every checker holds under the swarm, Lifeguard on and off; each seed has figures', () => {
    for (const seed of [1, 3, 8, 11]) {
      const result = runGossipSeed(seed, SMALL);
      assert.deepEqual(result.violations, [], `seed ${seed}`);
      assert.equal(result.figures.runs.length, 2);
      assertFigures(result);
    }
  });

  test('keep-oldest and static-quorum hold through the scripted partition too', () => {
    for (const strategy of ['keep-oldest', 'static-quorum']) {
      const result = runGossipSeed(2, { ...SMALL, members: 12, lifeguard: 'on', strategy });
      assert.deepEqual(result.violations, [], strategy);
      assertFigures(result);
    }
  });

  test('one coordinator per generation after a heal the minority was too slow to latch for', () => {
    // Before the revival question (SwimMember.waitForRevived), seed 23 at 30 members (and seed
    // 2 at 100) failed: n2, the old coordinator of a minority that had not yet counted the
    // majority dead, heard of a member re-admitted there (40.4 s) before it heard of n3's claim,
    // and claimed generation 6, which n3 already held. test/core/swim/revival-claim.test.ts
    // holds the mechanism; this seed is the scenario that found it.
    const result = runGossipSeed(23, { ...SMALL, members: 30, lifeguard: 'on', loss: 0.01 });
    assert.deepEqual(result.violations, [], 'replay: npx conclave sim --scenario gossip '
      + '--seed 23 --seeds 1 --members 30 --loss 0.01');
  });

  test('bite: a probe period below the RTT and a tiny suspicion timeout kill live members', () => {
    const result = runGossipSeed(1, { ...SMALL, members: 12, lifeguard: 'off', loss: 0 }, {
      config: { probeIntervalMs: 2, probeTimeoutMs: 1, suspicionMult: 1 },
      stopAtFirstViolation: true,
    });
    assert.equal(result.violations[0]?.checker, 'no-false-dead', JSON.stringify(result.violations));
  });

  test('bite: without reconnects the sides never merge, and the heal bound is missed', () => {
    // Seed 4 cuts three members off with the coordinator (a lone coordinator may still be
    // reached by a restarted member joining through it).
    const result = runGossipSeed(4, { ...SMALL, members: 12, lifeguard: 'on', loss: 0 }, {
      config: { reconnectIntervalMs: 0 }, stopAtFirstViolation: true,
    });
    const checkers = result.violations.map((v) => v.checker);
    assert.ok(checkers.includes('leader-agreement') || checkers.includes('view-agreement'),
      JSON.stringify(result.violations));
    assert.match(result.violations[0]?.message ?? '', /partition-heal/);
  });

  test('the summary gives every figure and compares Lifeguard on and off; the CLI knows it', () => {
    const results = [4, 5].map((seed) => runGossipSeed(seed, { ...SMALL, members: 12 }));
    const text = gossipScenario.summarize(results, { ...SMALL, members: 12 }).lines.join('\n');
    for (const part of [
      'lifeguard on:', 'lifeguard off:', 'first suspicion p50', "first 'dead' p50",
      'everyone holds it dead p50', "false 'dead' per 100 member-hours", 'bytes per member',
      'after the coordinator crashes: p50', 'after the partition heals: p50',
      'after the coordinator leaves: p50', 'Lifeguard on vs off, same faults',
      "seed 4 (", "seed 5 (", "seeds (", 'lifeguard off', 'off/on',
    ]) {
      assert.ok(text.includes(part), `missing "${part}" in:\n${text}`);
    }
    assert.equal(SCENARIOS.get('gossip'), gossipScenario);
  });
});
