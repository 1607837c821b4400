// Goal: the WGL checker gives the right verdict on hand-written register histories whose
// answer is known (the classic stale read, new-old inversion, concurrent read and write,
// maybe-applied and failed writes, touching intervals), partitions by key, stops at its step
// budget with `unknown`, and reports where an illegal history gets stuck.
// Method: small histories written out by hand, checked with the kv model; each expectation
// is argued in the test's comment.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkLinearizable, formatIllegalReport, validateLinearizabilityConfig, LINEARIZABILITY_DEFAULTS,
} from '../../../src/sim/checkers/linearizability.js';
import type { Model } from '../../../src/sim/checkers/linearizability.js';
import { kvModel } from '../../../src/sim/checkers/kv-model.js';
import type { KvInput, KvOutput, KvState } from '../../../src/sim/checkers/kv-model.js';
import { cas, del, failed, get, maybe, ok, put, saw } from './kv-histories.js';
import type { KvOperation } from './kv-histories.js';

const verdict = (history: readonly KvOperation[]): string =>
  checkLinearizable(kvModel, history).result;

/** The kv model without partitioning: checks the whole history as one object. */
const unpartitioned: Model<KvState, KvInput, KvOutput> = {
  init: kvModel.init,
  step: kvModel.step,
  hash: kvModel.hash,
  describe: kvModel.describe,
};

describe('sim: checkers: linearizability: registers', () => {
  test('an empty history is linearizable', () => {
    const result = checkLinearizable(kvModel, []);
    assert.equal(result.result, 'ok');
    assert.equal(result.partitions.length, 0);
  });

  test('a read after a completed write sees it', () => {
    assert.equal(verdict([ok('c1', put('x', 'a'), 0, 1), ok('c2', get('x'), 2, 3, saw('a'))]),
      'ok');
  });

  test('a stale read after a completed write is illegal', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      ok('c1', put('x', 'b'), 2, 3),
      ok('c2', get('x'), 4, 5, saw('a')),
    ];
    const result = checkLinearizable(kvModel, history);
    assert.equal(result.result, 'illegal');
    const detail = result.illegal;
    assert.ok(detail !== undefined);
    assert.deepEqual(detail.linearizedPrefix.map((op) => op.operationIndex), [0, 1]);
    assert.equal(detail.blockingOperation.operationIndex, 2);
    assert.equal(detail.stateAfterPrefix, '"x" = "b"');
  });

  test('a read concurrent with a write may see the old or the new value, nothing else', () => {
    const write = ok('c1', put('x', 'a'), 0, 10);
    assert.equal(verdict([write, ok('c2', get('x'), 2, 3, saw(undefined))]), 'ok');
    assert.equal(verdict([write, ok('c2', get('x'), 2, 3, saw('a'))]), 'ok');
    assert.equal(verdict([write, ok('c2', get('x'), 2, 3, saw('b'))]), 'illegal');
  });

  test('once a read sees a concurrent write, a later read cannot see the old value', () => {
    // New-old inversion: the write's point is before the first read's, so before the second.
    const write = ok('c1', put('x', 'a'), 0, 10);
    const newRead = ok('c2', get('x'), 1, 2, saw('a'));
    const oldRead = ok('c3', get('x'), 3, 4, saw(undefined));
    assert.equal(verdict([write, newRead, oldRead]), 'illegal');
    // Overlapping reads may be ordered either way, so the same answers are fine.
    assert.equal(verdict([write, ok('c2', get('x'), 1, 5, saw('a')), oldRead]), 'ok');
  });

  test('intervals that touch (return = call) count as concurrent', () => {
    const write = ok('c1', put('x', 'a'), 0, 5);
    assert.equal(verdict([write, ok('c2', get('x'), 5, 6, saw(undefined))]), 'ok');
    assert.equal(verdict([write, ok('c2', get('x'), 6, 7, saw(undefined))]), 'illegal');
  });

  test('delete makes the key absent', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      ok('c1', del('x'), 2, 3),
      ok('c2', get('x'), 4, 5, saw(undefined)),
    ];
    assert.equal(verdict(history), 'ok');
    assert.equal(verdict([...history.slice(0, 2), ok('c2', get('x'), 4, 5, saw('a'))]), 'illegal');
  });

  test('of two concurrent cas from absent, at most one succeeds', () => {
    const first = ok('c1', cas('x', undefined, 'a'), 0, 10, { ok: true });
    assert.equal(verdict([first, ok('c2', cas('x', undefined, 'b'), 1, 9, { ok: true })]),
      'illegal');
    assert.equal(verdict([first, ok('c2', cas('x', undefined, 'b'), 1, 9, { ok: false })]), 'ok');
    // A cas that lost must have seen a value other than the expected one.
    assert.equal(verdict([ok('c2', cas('x', undefined, 'b'), 1, 9, { ok: false })]), 'illegal');
  });
});

describe('sim: checkers: linearizability: uncertain outcomes', () => {
  test('a write of unknown outcome may be observed later, or never', () => {
    const write = maybe('c1', put('x', 'a'), 0);
    assert.equal(verdict([write, ok('c2', get('x'), 5, 6, saw('a'))]), 'ok');
    assert.equal(verdict([write, ok('c2', get('x'), 5, 6, saw(undefined))]), 'ok');
    assert.equal(verdict([write, ok('c2', get('x'), 500, 600, saw(undefined))]), 'ok');
  });

  test('a write of unknown outcome takes effect at one point: once seen, always seen', () => {
    const history = [
      maybe('c1', put('x', 'a'), 0),
      ok('c2', get('x'), 5, 6, saw('a')),
      ok('c2', get('x'), 7, 8, saw(undefined)),
    ];
    assert.equal(verdict(history), 'illegal');
  });

  test('a write of unknown outcome cannot be observed before its call', () => {
    const history = [ok('c2', get('x'), 0, 1, saw('a')), maybe('c1', put('x', 'a'), 5)];
    assert.equal(verdict(history), 'illegal');
  });

  test('a cas of unknown outcome applies only if its comparison held where it took effect', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      maybe('c2', cas('x', 'a', 'b'), 2),
      ok('c1', put('x', 'c'), 3, 4),
      ok('c3', get('x'), 5, 6, saw('b')),
    ];
    // After put(c) the cas compares "c" with "a" and cannot set "b"; before it, put(c) wins.
    assert.equal(verdict(history), 'illegal');
    assert.equal(verdict(history.slice(0, 2).concat(ok('c3', get('x'), 5, 6, saw('b')))), 'ok');
  });

  test('a failed write must not be observed', () => {
    const write = failed('c1', put('x', 'a'), 0, 1);
    assert.equal(verdict([write, ok('c2', get('x'), 5, 6, saw(undefined))]), 'ok');
    assert.equal(verdict([write, ok('c2', get('x'), 5, 6, saw('a'))]), 'illegal');
  });

  test('failed operations and reads of unknown outcome are dropped before the search', () => {
    const result = checkLinearizable(kvModel, [
      failed('c1', put('x', 'a'), 0, 1),
      maybe('c2', get('x'), 0),
      maybe('c3', put('x', 'b'), 0),
      ok('c4', get('x'), 5, 6, saw('b')),
    ]);
    assert.equal(result.result, 'ok');
    assert.equal(result.droppedCount, 2);
    assert.deepEqual(result.partitions.map((p) => p.operationCount), [2]);
  });

  test('the model may drop unknown writes that cannot matter, and only those', () => {
    // kvModel.simplify: nobody observes "b", so the maybe-applied put of it cannot matter.
    const history = [maybe('c3', put('x', 'b'), 0), ok('c4', get('x'), 5, 6, saw(undefined))];
    const result = checkLinearizable(kvModel, history);
    assert.equal(result.result, 'ok');
    assert.equal(result.droppedCount, 1);
    const greedy: Model<KvState, KvInput, KvOutput> = { ...unpartitioned, simplify: () => [] };
    assert.throws(() => checkLinearizable(greedy, history), /may only drop unknown operations/);
  });
});

describe('sim: checkers: linearizability: partitions', () => {
  test('each key is its own partition, labelled and numbered in order of first appearance', () => {
    const history = [
      ok('c1', put('y', 'a'), 0, 1),
      ok('c1', put('x', 'a'), 2, 3),
      ok('c2', get('y'), 4, 5, saw('a')),
    ];
    const result = checkLinearizable(kvModel, history);
    assert.equal(result.result, 'ok');
    assert.deepEqual(result.partitions.map((p) => [p.label, p.operationCount, p.result]),
      [['key "y"', 2, 'ok'], ['key "x"', 1, 'ok']]);
  });

  test('an illegal key is reported with indexes into the whole history', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      ok('c1', put('y', 'a'), 2, 3),
      ok('c2', get('x'), 4, 5, saw('a')),
      ok('c2', get('y'), 6, 7, saw('b')),
    ];
    const result = checkLinearizable(kvModel, history);
    assert.equal(result.result, 'illegal');
    assert.equal(result.illegal?.partitionIndex, 1);
    assert.equal(result.illegal?.partitionLabel, 'key "y"');
    assert.deepEqual(result.illegal?.linearizedPrefix.map((op) => op.operationIndex), [1]);
    assert.equal(result.illegal?.blockingOperation.operationIndex, 3);
  });

  test('per-key and whole-history checks agree (P-compositionality)', () => {
    const histories: KvOperation[][] = [
      [ok('c1', put('x', 'a'), 0, 10), ok('c2', put('y', 'b'), 0, 10),
        ok('c3', get('x'), 2, 3, saw('a')), ok('c3', get('y'), 4, 5, saw(undefined))],
      [ok('c1', put('x', 'a'), 0, 1), ok('c2', put('y', 'b'), 2, 3),
        ok('c3', get('x'), 4, 5, saw('a')), ok('c3', get('y'), 6, 7, saw(undefined))],
    ];
    for (const history of histories) {
      assert.equal(checkLinearizable(unpartitioned, history).result, verdict(history));
    }
    assert.deepEqual(histories.map(verdict), ['ok', 'illegal']);
  });
});

/**
 * A partition that is linearizable but expensive: `writers` puts, all concurrent, then a read
 * that sees the first one; the search must try exponentially many (set, last write) pairs.
 */
function hardPartition(key: string, writers: number): KvOperation[] {
  const history: KvOperation[] = [];
  for (let i = 0; i < writers; i++) history.push(ok(`w${i}`, put(key, `v${i}`), 0, 100));
  history.push(ok('r', get(key), 200, 201, saw('v0')));
  return history;
}

describe('sim: checkers: linearizability: step budget', () => {
  test('a check that runs out of steps is unknown, never ok', () => {
    const history = hardPartition('x', 14);
    const result = checkLinearizable(kvModel, history, { stepBudget: 2_000 });
    assert.equal(result.result, 'unknown');
    assert.equal(result.partitions[0]?.result, 'unknown');
    assert.equal(result.stepsUsed, 2_000);
    assert.match(formatIllegalReport(result), /undecided when the step budget ran out: key "x"/);
  });

  test('the same check with enough steps is ok', () => {
    const result = checkLinearizable(kvModel, hardPartition('x', 8));
    assert.equal(result.result, 'ok');
    assert.ok(result.stepsUsed > 100, `expected a real search, took ${result.stepsUsed} steps`);
  });

  test('partitions take turns, so an illegal key is found beside one too hard to finish', () => {
    const history = [
      ...hardPartition('hard', 14),
      ok('c1', put('easy', 'a'), 0, 1),
      ok('c1', put('easy', 'b'), 2, 3),
      ok('c2', get('easy'), 4, 5, saw('a')),
    ];
    const result = checkLinearizable(kvModel, history, { stepBudget: 50_000, sliceSteps: 100 });
    assert.equal(result.result, 'illegal');
    assert.equal(result.illegal?.partitionLabel, 'key "easy"');
    assert.equal(result.partitions[0]?.result, 'unknown');
    assert.ok(result.stepsUsed < 1_000, `stopped at the illegal key: ${result.stepsUsed} steps`);
  });

  test('a long sequential history is checked without deep recursion', () => {
    const history: KvOperation[] = [];
    for (let i = 0; i < 20_000; i++) {
      history.push(i % 2 === 0 ? ok('c1', put('x', `v${i}`), 2 * i, 2 * i + 1)
        : ok('c2', get('x'), 2 * i, 2 * i + 1, saw(`v${i - 1}`)));
    }
    const result = checkLinearizable(kvModel, history);
    assert.equal(result.result, 'ok');
    assert.equal(result.stepsUsed, 20_000);
  });
});

describe('sim: checkers: linearizability: config and input', () => {
  test('validateLinearizabilityConfig reports every violated rule', () => {
    assert.deepEqual(validateLinearizabilityConfig(LINEARIZABILITY_DEFAULTS), []);
    assert.equal(validateLinearizabilityConfig({ stepBudget: 0, sliceSteps: 1.5 }).length, 2);
    assert.throws(() => checkLinearizable(kvModel, [], { stepBudget: -1 }), /stepBudget/);
  });

  test('a malformed history is a programmer error that names every problem', () => {
    const bad = [
      { ...ok('c1', put('x', 'a'), 5, 1) },
      { ...ok('', get('x'), 0, 1, saw('a')), output: undefined },
    ];
    assert.throws(() => checkLinearizable(kvModel, bad),
      (error: Error) => /return 1 is before call 5/.test(error.message)
        && /clientId/.test(error.message) && /needs an output/.test(error.message));
  });

  test('a history survives a JSON round trip with the same verdict', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      maybe('c1', cas('x', undefined, 'b'), 2),
      ok('c2', get('x'), 4, 5, saw(undefined)),
    ];
    const parsed = JSON.parse(JSON.stringify(history)) as KvOperation[];
    assert.equal(verdict(history), 'illegal');
    assert.equal(verdict(parsed), 'illegal');
  });
});

describe('sim: checkers: linearizability: report', () => {
  test('formatIllegalReport names the partition, the prefix, the state and the culprit', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      ok('c1', put('x', 'b'), 2, 3),
      ok('c2', get('x'), 4, 5, saw('a')),
      ok('c3', get('x'), 4, 6, saw('z')),
      ok('c4', get('x'), 7, 8, saw('b')),
    ];
    const result = checkLinearizable(kvModel, history);
    const report = formatIllegalReport(result);
    assert.equal(result.result, 'illegal');
    const expected = [
      'illegal partition 0: key "x" (5 operations)',
      'longest linearizable prefix: 2 operations',
      '    1. #0 c1 [0, 1] put("x", "a")',
      '    2. #1 c1 [2, 3] put("x", "b")',
      'state after the prefix: "x" = "b"',
      'cannot be linearized (illegal in that state):\n    #2 c2 [4, 5] get("x") → "a"',
      'pending beside it (each illegal in that state too):\n    #3 c3 [4, 6] get("x") → "z"',
    ];
    for (const line of expected) assert.ok(report.includes(line), `missing ${line} in\n${report}`);
    assert.ok(!report.includes('#4'), report);
  });

  test('formatIllegalReport shows operations of unknown outcome as open intervals', () => {
    const history = [
      ok('c1', put('x', 'a'), 0, 1),
      maybe('c3', put('x', 'c'), 3),
      ok('c2', get('x'), 4, 5, saw('c')),
      ok('c2', get('x'), 6, 7, saw('a')),
    ];
    const result = checkLinearizable(kvModel, history);
    assert.equal(result.result, 'illegal');
    assert.match(formatIllegalReport(result),
      /#1 c3 \[3, ∞\) put\("x", "c"\) \[outcome unknown\]/);
  });

  test('an ok check reports one line', () => {
    const report = formatIllegalReport(checkLinearizable(kvModel, [ok('c1', put('x', 'a'), 0, 1)]));
    assert.equal(report, 'linearizability: ok (1 operations, 0 dropped, 1 partitions, '
      + `1 of ${LINEARIZABILITY_DEFAULTS.stepBudget} steps)`);
  });
});
