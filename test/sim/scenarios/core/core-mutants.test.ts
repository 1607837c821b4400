/**
 * Goal: each planted server-path bug (CoreMutants) is caught by scenario `core` by the checker
 * that guards the rule it breaks, on a seed that the correct code passes (core-scenario.test.ts
 * runs seeds 1–3 clean).
 * Method: one whole seed per mutant, found by running seeds from 1 (defaults: 5 members, 4 KV
 * clients, 1 reader, 2 lease clients, 3 watchers, 10 s of faults, stale-leader faults):
 * - retryReapplied (the store's idempotency check dropped) at seed 2 of 1–3, by
 *   `linearizability` (illegal: a client's retried write applied again after it was
 *   acknowledged);
 * - watchSkipsEvent (a page of watch events loses its last) at seeds 1, 2 and 3, by
 *   `watch-complete` (a watcher's events differ from the store's history);
 * - readsWithoutReadIndex (a linearizable read answered from the member's state) at every seed
 *   of 1–10, by `linearizability` (illegal: the reader, left with a leader cut off by a
 *   stale-leader fault, read a value older than a write its successor had acknowledged).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCoreSeed } from '../../../../src/sim/scenarios/core/index.js';
import type { ScenarioOptions } from '../../../../src/sim/scenario.js';

const OPTIONS: ScenarioOptions = { nodes: 5, 'kv-clients': 4, readers: 1, 'lease-clients': 2,
  watchers: 3, 'safety-s': 10 };

async function checkersFiring(mutant: string, seed: number): Promise<string[]> {
  const result = await runCoreSeed(seed, { ...OPTIONS, mutant });
  return [...new Set(result.violations.map((v) => v.checker))];
}

describe('sim: scenarios: core: mutants', () => {
  test('retryReapplied (no idempotency check on retry) is caught by linearizability',
    async () => {
      assert.deepEqual(await checkersFiring('retryReapplied', 2), ['linearizability']);
    });

  test('watchSkipsEvent (an event lost from a page) is caught by watch-complete', async () => {
    assert.deepEqual(await checkersFiring('watchSkipsEvent', 1), ['watch-complete']);
  });

  test('readsWithoutReadIndex (no ReadIndex) is caught by linearizability: a stale leader '
    + 'answers the reader', async () => {
    assert.deepEqual(await checkersFiring('readsWithoutReadIndex', 1), ['linearizability']);
  });
});
