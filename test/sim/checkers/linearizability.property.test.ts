// Goal: the checker never rejects a linearizable history, always rejects a read of a value
// nobody wrote, agrees with an exhaustive search on small random histories, and finishes a
// realistic 5-client history well inside its default budget.
// Method: fast-check. (a) run a random sequential schedule against a Map, then widen each
// operation's interval around its point (ok / unknown-applied / unknown-lost / failed);
// (b) the same with one ok read's answer replaced by a value never written; (c) random small
// histories with arbitrary answers, compared with a brute-force search over every subset of
// the unknown operations and every order that respects real time. Plus one seeded simulation
// of 5 clients × 200 operations on 5 keys whose step count is printed as a diagnostic.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkLinearizable, LINEARIZABILITY_DEFAULTS,
} from '../../../src/sim/checkers/linearizability.js';
import { kvModel } from '../../../src/sim/checkers/kv-model.js';
import type { KvInput, KvOutput, KvState } from '../../../src/sim/checkers/kv-model.js';
import { historyFromSchedule, POINT_SPACING_MS, simulatedHistory } from './kv-histories.js';
import type { KvOperation, ScheduledOperation } from './kv-histories.js';

const VALUES = ['a', 'b', 'c'];

function inputArbitrary(keys: readonly string[]): fc.Arbitrary<KvInput> {
  const key = fc.constantFrom(...keys);
  const value = fc.constantFrom(...VALUES);
  return fc.oneof(
    fc.record({ kind: fc.constant('get' as const), key }),
    fc.record({ kind: fc.constant('put' as const), key, value }),
    fc.record({ kind: fc.constant('delete' as const), key }),
    fc.record({
      kind: fc.constant('cas' as const), key, value,
      expected: fc.option(value, { nil: undefined }),
    }),
  );
}

const widthMs = fc.integer({ min: 0, max: 4 * POINT_SPACING_MS });

const scheduledArbitrary: fc.Arbitrary<ScheduledOperation> = fc.record({
  clientId: fc.constantFrom('c1', 'c2', 'c3', 'c4'),
  input: inputArbitrary(['x', 'y']),
  fate: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'unknown-applied', 'unknown-lost', 'failed'),
  callBeforeMs: widthMs,
  returnAfterMs: widthMs,
});

const scheduleArbitrary = fc.array(scheduledArbitrary, { maxLength: 40 });

describe('sim: checkers: linearizability: properties', () => {
  test('a history widened around a sequential schedule is linearizable', () => {
    fc.assert(fc.property(scheduleArbitrary, (schedule) => {
      const result = checkLinearizable(kvModel, historyFromSchedule(schedule));
      assert.equal(result.result, 'ok');
    }), { numRuns: 300 });
  });

  test('the same history with one read of a value never written is illegal', () => {
    fc.assert(fc.property(scheduleArbitrary, fc.nat(), (schedule, pick) => {
      const history = historyFromSchedule(schedule);
      const reads = history.flatMap((op, i) =>
        (op.outcome === 'ok' && op.input.kind === 'get' ? [i] : []));
      fc.pre(reads.length > 0);
      const target = reads[pick % reads.length]!;
      const mutated = history.map((op, i) =>
        (i === target ? { ...op, output: { value: 'never-written' } } : op));
      const result = checkLinearizable(kvModel, mutated);
      assert.equal(result.result, 'illegal');
      // Never legal, so never in the prefix; which operation blocks first depends on the search.
      assert.ok(!result.illegal?.linearizedPrefix.some((op) => op.operationIndex === target));
    }), { numRuns: 300 });
  });

  test('on small random histories the verdict matches an exhaustive search', () => {
    fc.assert(fc.property(fc.array(randomOperation(false), { maxLength: 7 }), (history) => {
      const expected = bruteForceLinearizable(history) ? 'ok' : 'illegal';
      assert.equal(checkLinearizable(kvModel, history).result, expected);
    }), { numRuns: 1000 });
  });

  test('... including when no cas failed, so that kvModel.simplify drops unknown writes', () => {
    fc.assert(fc.property(fc.array(randomOperation(true), { maxLength: 7 }), (history) => {
      const expected = bruteForceLinearizable(history) ? 'ok' : 'illegal';
      assert.equal(checkLinearizable(kvModel, history).result, expected);
    }), { numRuns: 1000 });
  });
});

/**
 * Any operation at all: arbitrary (often wrong) answers, small times so that many overlap;
 * with `casAlwaysOk`, every completed cas reports success.
 */
const randomOperation = (casAlwaysOk: boolean): fc.Arbitrary<KvOperation> => fc.record({
  clientId: fc.constantFrom('c1', 'c2', 'c3'),
  input: inputArbitrary(['x', 'y']),
  call: fc.integer({ min: 0, max: 8 }),
  lengthMs: fc.integer({ min: 0, max: 4 }),
  outcome: fc.constantFrom('ok', 'ok', 'ok', 'unknown', 'failed') as fc.Arbitrary<
    'ok' | 'unknown' | 'failed'>,
  value: fc.option(fc.constantFrom(...VALUES), { nil: undefined }),
  casOk: casAlwaysOk ? fc.constant(true) : fc.boolean(),
}).map((r) => {
  const output: KvOutput = r.input.kind === 'cas' ? { ok: r.casOk }
    : r.input.kind === 'get' && r.value !== undefined ? { value: r.value } : {};
  return {
    clientId: r.clientId,
    input: r.input,
    call: r.call,
    return: r.outcome === 'unknown' ? undefined : r.call + r.lengthMs,
    output: r.outcome === 'ok' ? output : undefined,
    outcome: r.outcome,
  };
});

/**
 * The definition, searched exhaustively: some subset of the unknown operations plus every ok
 * one, in some order where a before b whenever a returned strictly before b was called, that
 * the model accepts. Failed operations never take effect.
 */
function bruteForceLinearizable(history: readonly KvOperation[]): boolean {
  const ok = history.filter((op) => op.outcome === 'ok');
  const unknown = history.filter((op) => op.outcome === 'unknown');
  for (let mask = 0; mask < 1 << unknown.length; mask++) {
    const included = [...ok, ...unknown.filter((_, i) => (mask & (1 << i)) !== 0)];
    if (someOrderWorks(included, kvModel.init())) return true;
  }
  return false;
}

function someOrderWorks(remaining: readonly KvOperation[], state: KvState): boolean {
  if (remaining.length === 0) return true;
  const returnOf = (op: KvOperation): number => op.return ?? Infinity;
  return remaining.some((op, i) => {
    // op may go next only if no other remaining operation returned strictly before its call.
    if (remaining.some((other) => other !== op && returnOf(other) < op.call)) return false;
    const output = op.outcome === 'ok' ? op.output : undefined;
    const { ok, next } = kvModel.step(state, op.input, output);
    return ok && someOrderWorks(remaining.filter((_, j) => j !== i), next);
  });
}

describe('sim: checkers: linearizability: performance sanity', () => {
  test('5 clients × 200 operations on 5 keys finish well inside the default budget', (t) => {
    for (const seed of [1, 2, 3]) {
      const history = simulatedHistory(seed, {
        clients: 5, opsPerClient: 200, keys: 5, unknownRate: 0.03, failedRate: 0.02,
      });
      const result = checkLinearizable(kvModel, history);
      t.diagnostic(`seed ${seed}: ${result.result} in ${result.stepsUsed} steps `
        + `(${result.partitions.map((p) => p.stepsUsed).join(' + ')})`);
      assert.equal(result.result, 'ok');
      assert.ok(result.stepsUsed < LINEARIZABILITY_DEFAULTS.stepBudget / 10,
        `${result.stepsUsed} steps`);
    }
  });
});
