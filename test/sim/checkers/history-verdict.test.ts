/**
 * sim: checkers: history verdict — what a seed makes of a linearizability check: `unknown`
 * fails it unless every undecided partition is over the size the budget is planned for.
 * Method: small hand-built histories with tiny step budgets, so the size mark is reached with
 * a handful of operations (budget / 100 per partition).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  judgeHistory, partitionOperationsSizedMax, STEPS_PER_OPERATION_PLANNED,
} from '../../../src/sim/checkers/history-verdict.js';
import { checkLinearizable } from '../../../src/sim/checkers/linearizability.js';
import { kvModel } from '../../../src/sim/checkers/kv-model.js';
import { get, ok, put, saw, type KvOperation } from './kv-histories.js';

/** `writers` overlapping writes of one key, then a read: the search must try many orders. */
function hardPartition(key: string, writers: number): KvOperation[] {
  const history: KvOperation[] = [];
  for (let i = 0; i < writers; i++) history.push(ok(`w${i}`, put(key, `v${i}`), 0, 100));
  history.push(ok('r', get(key), 200, 201, saw('v0')));
  return history;
}

describe('sim: checkers: history verdict', () => {
  test('ok passes; illegal fails, named linearizability, with the report', () => {
    const fine = checkLinearizable(kvModel, [ok('c', put('x', 'a'), 0, 1)]);
    assert.deepEqual(judgeHistory(fine, 5), { verdict: 'ok' });
    const bad = checkLinearizable(kvModel, [ok('c', put('x', 'a'), 0, 1),
      ok('c', get('x'), 2, 3, saw('b'))]);
    const judged = judgeHistory(bad, 5);
    assert.equal(judged.verdict, 'illegal');
    assert.equal(judged.violation?.checker, 'linearizability');
    assert.match(judged.violation?.message ?? '', /illegal partition 0: key "x"/);
  });

  test('unknown within the planned size fails the seed: the check proved nothing', () => {
    // 15 operations; a budget of 2,000 steps is planned for partitions of up to 20.
    const result = checkLinearizable(kvModel, hardPartition('x', 14), { stepBudget: 2_000 });
    assert.equal(result.result, 'unknown');
    assert.equal(partitionOperationsSizedMax(2_000), 20);
    const judged = judgeHistory(result, 9);
    assert.equal(judged.verdict, 'unknown');
    assert.equal(judged.violation?.checker, 'linearizability-unknown');
    assert.match(judged.violation?.message ?? '', /undecided when the step budget ran out/);
  });

  test('unknown only in partitions over the planned size is too-big: passes, counted apart', () => {
    // 15 operations; a budget of 1,000 steps is planned for partitions of up to 10.
    const result = checkLinearizable(kvModel, hardPartition('x', 14), { stepBudget: 1_000 });
    assert.equal(result.result, 'unknown');
    const judged = judgeHistory(result, 9);
    assert.equal(judged.verdict, 'too-big');
    assert.equal(judged.violation, undefined);
    assert.match(judged.tooBig ?? '', /key "x" \(15 operations\) over 10 operations/);
  });

  test('one undecided partition within the size fails even beside one too big', () => {
    const history = [...hardPartition('big', 14), ...hardPartition('small', 7)];
    const budget = 10 * STEPS_PER_OPERATION_PLANNED; // partitions of up to 10 operations
    const result = checkLinearizable(kvModel, history, { stepBudget: budget, sliceSteps: 10 });
    const undecided = result.partitions.filter((p) => p.result === 'unknown').map((p) => p.label);
    assert.deepEqual(undecided, ['key "big"', 'key "small"']);
    assert.equal(judgeHistory(result, 0).verdict, 'unknown');
  });
});
